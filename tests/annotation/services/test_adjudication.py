"""Adjudication: the review queue's contents, decisions as gold, automatic gold, idempotency."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, AlignmentRun, CandidatePair, Label, Membership, Status, indices_key
from annotation.services import adjudication, qc
from annotation.services.alignment_runs import link_sentences
from tests import factories


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
