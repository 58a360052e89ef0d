"""Adjudication: the review queue's contents, decisions as gold, automatic gold, idempotency."""
from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import (
    Adjudication,
    AdjudicationChange,
    AlignmentRun,
    Assignment,
    CandidatePair,
    Label,
    Membership,
    Status,
    indices_key,
)
from annotation.services.alignment.run_saving import link_sentences
from annotation.services.review import adjudication, qc
from tests import factories, labels


def make_pairs(project, n: int, *, scores: list[float] | None = None, run: AlignmentRun | None = None,
               title: str = "Review article") -> list[CandidatePair]:
    """An article with ``n`` complex and ``n`` simple sentences, the i-th paired 1:1 with the i-th
    (pairs of ``run``, a new succeeded run by default), scored ``scores[i]`` (default 0.5)."""
    article = factories.make_article(project, title, {
        "adv": [[f"The complex sentence number {i} is rather long and winding." for i in range(n)]],
        "ele": [[f"Simple sentence {i}." for i in range(n)]],
    })
    complex_doc, simple_doc = article.documents.order_by("rank")
    run = run or AlignmentRun.objects.create(project=project, method="jaccard", status=Status.SUCCEEDED)
    scores = scores or [0.5] * n
    pairs = CandidatePair.objects.bulk_create([
        CandidatePair(article=article, complex_document=complex_doc, simple_document=simple_doc,
                      complex_key=indices_key([i]), simple_key=indices_key([i]), score=scores[i])
        for i in range(n)])
    link_sentences(pairs)
    return factories.predict(run, CandidatePair.objects.filter(article=article).order_by("id"))


def vote(pair, user, value: str, *, seconds: float = 12.0, comment: str = "", test: bool = False) -> Label:
    return Label.objects.create(pair=pair, annotator=user, value=value, seconds=seconds, comment=comment,
                                is_test_question=test)


@pytest.fixture
def crowd(project, users):
    """anna, bob and cleo annotate the project."""
    extra = [factories.make_user(name) for name in ("bob", "cleo")]
    for user in extra:
        Membership.objects.create(project=project, user=user, role="annotator")
    return [users["anna"], *extra]


def test_the_queue_holds_pairs_whose_counted_votes_disagree(project, crowd):
    anna, bob, cleo = crowd
    agree, disagree, alone, tested = make_pairs(project, 4)
    vote(agree, anna, "aligned"), vote(agree, bob, "aligned")
    vote(disagree, anna, "aligned"), vote(disagree, bob, "partial", comment="drops a clause")
    vote(alone, anna, "partial")
    vote(tested, anna, "aligned"), vote(tested, bob, "not-aligned", test=True)  # a test answer is no vote
    assert adjudication.queue_pair_ids(project) == [disagree.pk]
    [item] = adjudication.review_queue(project)
    assert item["complex_text"].startswith("The complex sentence number 1") and item["simple_text"] == "Simple sentence 1."
    assert [(v["annotator"], v["value"], v["comment"]) for v in item["votes"]] == [
        ("anna", "aligned", ""), ("bob", "partial", "drops a clause")]
    assert item["tally"] == {"aligned": 1, "partial": 1} and item["gold"] is None
    assert "score" not in item  # blind by default


def test_excluded_annotators_do_not_create_disagreements(project, crowd):
    anna, bob, _ = crowd
    [pair] = make_pairs(project, 1)
    vote(pair, anna, "aligned"), vote(pair, bob, "not-aligned")
    qc.exclude(bob, project, "below threshold")
    assert adjudication.queue_pair_ids(project) == []


def test_mode_all_queues_every_labelled_pair_and_can_show_the_score(project, crowd):
    anna, bob, _ = crowd
    first, second, unlabelled = make_pairs(project, 3, scores=[0.9, 0.4, 0.1])
    vote(first, anna, "aligned")
    vote(second, anna, "aligned"), vote(second, bob, "aligned")
    project.config = {"adjudicate": "all", "adjudicate_show_score": True}
    project.save()
    items = adjudication.review_queue(project)
    assert [i["pair"] for i in items] == [first.pk, second.pk]
    assert items[0]["score"] == 0.9


def test_an_unknown_queue_mode_is_refused_with_the_valid_ones(project):
    project.config = {"adjudicate": "some"}
    with pytest.raises(adjudication.AdjudicationError, match="disagreements, all"):
        adjudication.queue_pair_ids(project)


def test_a_decision_becomes_the_gold_label_and_leaves_the_queue(project, crowd, users):
    anna, bob, _ = crowd
    [pair] = make_pairs(project, 1)
    vote(pair, anna, "aligned"), vote(pair, bob, "partial")
    gold = adjudication.decide(pair, "partial", users["rita"], "the simple side drops a clause")
    assert (gold.value, gold.provenance, gold.reviewer, gold.note) == (
        "partial", Adjudication.ADJUDICATED, users["rita"], "the simple side drops a clause")
    assert adjudication.queue_pair_ids(project) == []


def test_deciding_again_replaces_the_decision_in_the_same_row(project, crowd, users):
    [pair] = make_pairs(project, 1)
    first = adjudication.decide(pair, "aligned", users["rita"])
    again = adjudication.decide(pair, "aligned", users["rita"])
    changed = adjudication.decide(pair, "not-aligned", users["admin"], "second look")
    assert first.pk == again.pk == changed.pk and Adjudication.objects.count() == 1
    assert Adjudication.objects.get().value == "not-aligned"


def test_a_value_outside_the_scheme_is_refused(project, users):
    [pair] = make_pairs(project, 1)
    with pytest.raises(adjudication.AdjudicationError, match="choose one of: aligned, partial, not-aligned"):
        adjudication.decide(pair, "valid", users["rita"])
    assert not Adjudication.objects.exists()


def test_majority_gold_takes_the_most_frequent_vote_and_leaves_ties_for_review(project, crowd):
    anna, bob, cleo = crowd
    majority, tie, single = make_pairs(project, 3)
    vote(majority, anna, "aligned"), vote(majority, bob, "aligned"), vote(majority, cleo, "partial")
    vote(tie, anna, "aligned"), vote(tie, bob, "partial")
    vote(single, anna, "partial")
    result = adjudication.auto_gold(project, "majority")
    assert result == {"created": 1, "updated": 0, "unchanged": 0, "removed": 0, "ties": 1}
    gold = Adjudication.objects.get()
    assert (gold.pair_id, gold.value, gold.provenance) == (majority.pk, "aligned", Adjudication.MAJORITY)
    # majority gold does not settle the pair: a reviewer may still look at it; the tie stays queued
    assert adjudication.queue_pair_ids(project) == [majority.pk, tie.pk]


def test_auto_gold_is_idempotent_and_follows_changed_votes_but_never_overrides_a_decision(project, crowd, users):
    anna, bob, cleo = crowd
    decided, automatic = make_pairs(project, 2)
    for pair in (decided, automatic):
        vote(pair, anna, "aligned"), vote(pair, bob, "aligned")
    adjudication.decide(decided, "not-aligned", users["rita"])
    assert adjudication.auto_gold(project)["created"] == 1
    assert adjudication.auto_gold(project) == {"created": 0, "updated": 0, "unchanged": 1, "removed": 0, "ties": 0}
    Label.objects.filter(pair=automatic).update(value="partial")
    assert adjudication.auto_gold(project)["updated"] == 1
    assert automatic.__class__.objects.get(pk=automatic.pk).gold.value == "partial"
    assert Adjudication.objects.get(pair=decided).value == "not-aligned"


def test_single_annotator_gold_covers_pairs_with_one_vote(project, crowd):
    anna, bob, _ = crowd
    one, two = make_pairs(project, 2)
    vote(one, anna, "partial")
    vote(two, anna, "aligned"), vote(two, bob, "aligned")
    assert adjudication.auto_gold(project, "single")["created"] == 1
    gold = Adjudication.objects.get()
    assert (gold.pair_id, gold.value, gold.provenance) == (one.pk, "partial", Adjudication.SINGLE)
    with pytest.raises(adjudication.AdjudicationError, match="majority, single"):
        adjudication.auto_gold(project, "everyone")


# --- Change, history, revert ----------------------------------------------------------------------

def gold_of(pair) -> tuple[str, str] | None:
    gold = Adjudication.objects.filter(pair=pair).first()
    return (gold.value, gold.provenance) if gold else None


def test_changing_a_decision_is_recorded_with_the_old_and_new_value(project, crowd, users):
    [pair] = make_pairs(project, 1)
    adjudication.decide(pair, "aligned", users["rita"], "first look")
    adjudication.decide(pair, "partial", users["admin"], "second look")
    adjudication.decide(pair, "partial", users["admin"], "second look")  # the same again: no new row
    rows = [(c.action, c.old_value, c.new_value, c.new_note, c.changed_by.username) for c in adjudication.history(pair)]
    assert rows == [("decide", "", "aligned", "first look", "rita"), ("change", "aligned", "partial", "second look", "admin")]


def test_revert_restores_the_previous_value_and_is_itself_recorded(project, crowd, users):
    [pair] = make_pairs(project, 1)
    adjudication.decide(pair, "aligned", users["rita"], "first look")
    adjudication.decide(pair, "partial", users["admin"], "second look")
    assert adjudication.revert_target(pair).old_value == "aligned"
    gold = adjudication.revert(pair, users["admin"])
    assert (gold.value, gold.provenance, gold.note, gold.reviewer) == ("aligned", Adjudication.ADJUDICATED, "first look",
                                                                       users["rita"])
    last = adjudication.history(pair)[-1]
    assert (last.action, last.old_value, last.new_value, last.changed_by) == ("revert", "partial", "aligned", users["admin"])


def test_reverting_the_first_decision_removes_the_gold_and_then_nothing_is_left_to_revert(project, crowd, users):
    anna, bob, _ = crowd
    [pair] = make_pairs(project, 1)
    vote(pair, anna, "aligned"), vote(pair, bob, "partial")
    adjudication.decide(pair, "partial", users["rita"])
    adjudication.decide(pair, "aligned", users["rita"])
    assert adjudication.revert(pair, users["rita"]).value == "partial"
    assert adjudication.revert(pair, users["rita"]) is None  # reverting again walks back to "no gold"
    assert not Adjudication.objects.filter(pair=pair).exists()
    assert adjudication.queue_pair_ids(project) == [pair.pk]  # undecided again: back in the queue
    assert adjudication.revert_target(pair) is None
    with pytest.raises(adjudication.AdjudicationError, match="no gold change to revert"):
        adjudication.revert(pair, users["rita"])
    assert [c.action for c in adjudication.history(pair)] == ["decide", "change", "revert", "revert"]


def test_a_revert_can_restore_automatic_gold_overridden_by_a_decision(project, crowd, users):
    anna, bob, _ = crowd
    [pair] = make_pairs(project, 1)
    vote(pair, anna, "aligned"), vote(pair, bob, "aligned")
    adjudication.auto_gold(project)
    adjudication.decide(pair, "not-aligned", users["rita"])
    gold = adjudication.revert(pair, users["rita"])
    assert (gold.value, gold.provenance, gold.reviewer) == ("aligned", Adjudication.MAJORITY, None)


def test_auto_gold_records_what_it_creates_updates_and_removes(project, crowd, users):
    anna, bob, cleo = crowd
    follows, tie_later = make_pairs(project, 2)
    for pair in (follows, tie_later):
        vote(pair, anna, "aligned"), vote(pair, bob, "aligned")
    adjudication.auto_gold(project, by=users["rita"])
    Label.objects.filter(pair=follows).update(value="partial")
    Label.objects.filter(pair=tie_later, annotator=bob).update(value="partial")
    assert adjudication.auto_gold(project) == {"created": 0, "updated": 1, "unchanged": 0, "removed": 1, "ties": 1}
    assert [(c.action, c.old_value, c.new_value, c.new_provenance, c.changed_by) for c in adjudication.history(follows)] == [
        ("majority", "", "aligned", "majority", users["rita"]), ("majority", "aligned", "partial", "majority", None)]
    assert [(c.old_value, c.new_value) for c in adjudication.history(tie_later)] == [("", "aligned"), ("aligned", "")]


def test_the_preview_counts_what_auto_gold_would_do_without_writing(project, crowd, users):
    anna, bob, cleo = crowd
    new, changed, tie, decided = make_pairs(project, 4)
    for pair in (new, changed, decided):
        vote(pair, anna, "aligned"), vote(pair, bob, "aligned")
    vote(tie, anna, "aligned"), vote(tie, bob, "partial")
    Adjudication.objects.create(pair=changed, value="partial", provenance=Adjudication.MAJORITY)
    Adjudication.objects.create(pair=tie, value="aligned", provenance=Adjudication.MAJORITY)
    adjudication.decide(decided, "not-aligned", users["rita"])
    before = (list(Adjudication.objects.values_list("pair_id", "value", "provenance")),
              AdjudicationChange.objects.count())
    preview = adjudication.auto_gold_preview(project, "majority")
    assert preview == {"created": 1, "updated": 1, "unchanged": 0, "removed": 1, "ties": 1, "total": 3}
    assert (list(Adjudication.objects.values_list("pair_id", "value", "provenance")),
            AdjudicationChange.objects.count()) == before
    done = adjudication.auto_gold(project, "majority")
    assert {k: done[k] for k in ("created", "updated", "removed")} == {"created": 1, "updated": 1, "removed": 1}
    assert adjudication.auto_gold_preview(project)["total"] == 0


def test_majority_gold_follows_an_edited_vote_but_adjudicated_gold_does_not(project, crowd, users,
                                                                          django_capture_on_commit_callbacks):
    anna, bob, cleo = crowd
    automatic, decided = make_pairs(project, 2)
    for pair in (automatic, decided):
        vote(pair, anna, "aligned"), vote(pair, bob, "aligned"), vote(pair, cleo, "partial")
    adjudication.auto_gold(project)
    adjudication.decide(decided, "aligned", users["rita"], "checked")
    for pair in (automatic, decided):
        with django_capture_on_commit_callbacks(execute=True):
            labels.edit_label(bob, Label.objects.get(pair=pair, annotator=bob), value="partial")
    assert gold_of(automatic) == ("partial", Adjudication.MAJORITY)
    assert gold_of(decided) == ("aligned", Adjudication.ADJUDICATED)
    assert Adjudication.objects.get(pair=decided).note == "checked"
    last = adjudication.history(automatic)[-1]
    assert (last.action, last.old_value, last.new_value, last.changed_by) == ("majority", "aligned", "partial", None)
    assert [c.action for c in adjudication.history(decided)] == ["majority", "change"]  # the vote edit added none


def test_majority_gold_follows_a_new_vote_and_goes_when_it_becomes_a_tie(project, crowd, users,
                                                                          django_capture_on_commit_callbacks):
    anna, bob, cleo = crowd
    project.config = {"qc": {"min_seconds": 0, "test_every": 0}}
    project.save()
    [pair] = make_pairs(project, 1)
    vote(pair, anna, "aligned"), vote(pair, bob, "partial"), vote(pair, cleo, "partial")
    adjudication.auto_gold(project)
    assert gold_of(pair) == ("partial", Adjudication.MAJORITY)
    dave = factories.make_user("dave")
    Membership.objects.create(project=project, user=dave, role="annotator")
    Assignment.objects.create(pair=pair, annotator=dave)
    with django_capture_on_commit_callbacks(execute=True):
        labels.submit_label(dave, CandidatePair.objects.get(pk=pair.pk), value="aligned", seconds=5)
    assert gold_of(pair) is None  # 2 aligned, 2 partial: a tie, for the review queue
    assert adjudication.history(pair)[-1].new_value == "" and pair.pk in adjudication.queue_pair_ids(project)


def test_recently_decided_pairs_come_latest_first_and_carry_their_history(project, crowd, users):
    first, second, automatic = make_pairs(project, 3)
    anna, bob, _ = crowd
    vote(automatic, anna, "aligned"), vote(automatic, bob, "aligned")
    adjudication.auto_gold(project)
    adjudication.decide(first, "aligned", users["rita"])
    adjudication.decide(second, "partial", users["rita"])
    adjudication.revert(first, users["rita"])
    assert adjudication.recently_decided_pair_ids(project) == [first.pk, second.pk]
    review = adjudication.pair_review(project, second)
    assert review["gold"]["reviewer"] == "rita" and review["revert_to"] == {"value": "", "provenance": ""}
    assert [h["action"] for h in review["history"]] == ["decide"] and review["history"][0]["new"]["value"] == "partial"


def test_decide_created_says_whether_this_call_made_the_gold_row(project, users):
    """Issue 30 item 11: the API's 201/200 comes from here, not from a read before the decision."""
    [pair] = make_pairs(project, 1)
    gold, created = adjudication.decide_created(pair, "aligned", users["rita"])
    assert created and gold.value == "aligned"
    gold, created = adjudication.decide_created(pair, "partial", users["rita"])
    assert not created and gold.value == "partial"
    adjudication.revert(pair, users["rita"]), adjudication.revert(pair, users["rita"])  # back to no gold
    assert adjudication.decide_created(pair, "aligned", users["rita"])[1]


def test_the_queue_is_grouped_once_per_state_and_follows_every_change(project, crowd, users):
    """The queue is kept per review state (0.5 s of grouping votes a page at 1M pairs): a second read groups
    no votes, and a new vote, an edit, a decision or an exclusion is in the next read."""
    anna, bob, cleo = crowd
    first, second, third = make_pairs(project, 3)
    vote(first, anna, "aligned"), vote(first, bob, "partial")
    assert adjudication.queue_pair_ids(project) == [first.pk]
    with CaptureQueriesContext(connection) as queries:
        assert adjudication.queue_pair_ids(project) == [first.pk]
    assert not [q for q in queries.captured_queries if "GROUP BY" in q["sql"].upper()], "grouped again"
    assert len(queries.captured_queries) <= 12
    cache.clear()  # a restarted server reads the queue kept in the database at the same state
    with CaptureQueriesContext(connection) as queries:
        assert adjudication.queue_pair_ids(project) == [first.pk]
    assert not [q for q in queries.captured_queries if "GROUP BY" in q["sql"].upper()], "grouped after a restart"
    vote(second, anna, "aligned"), vote(second, cleo, "aligned")
    assert adjudication.queue_pair_ids(project) == [first.pk]
    labels.edit_label(cleo, Label.objects.get(pair=second, annotator=cleo), value="partial")
    assert adjudication.queue_pair_ids(project) == [first.pk, second.pk]
    adjudication.decide(first, "aligned", users["rita"])
    assert adjudication.queue_pair_ids(project) == [second.pk]
    vote(third, anna, "aligned"), vote(third, bob, "partial")
    assert adjudication.queue_pair_ids(project) == [second.pk, third.pk]
    qc.exclude(bob, project, "spam")
    assert adjudication.queue_pair_ids(project) == [second.pk]
    assert adjudication.queue_pair_ids(project, mode="all") == [second.pk, third.pk]
