"""The annotators' queue: scope, overlap quotas, resume, skip, undo, hidden test questions."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, AlignmentRun, Assignment, CandidatePair, Label, Status, indices_key
from annotation.services.alignment.run_saving import link_sentences
from annotation.services.review import labelling, qc, queue, queue_items, queue_progress
from tests import factories, labels

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau".split()


def build_queue(project, pairs: int, *, gold: int = 0, title: str = "Queue article", origin: str = "model",
                run: AlignmentRun | None = None) -> tuple[list[CandidatePair], list[CandidatePair]]:
    """An article whose two versions have ``pairs + gold`` sentences each, the i-th complex sentence
    paired 1:1 with the i-th simple one. The first ``pairs`` are queue work (of ``run``); the last
    ``gold`` have an Adjudication (value ``aligned``) and serve as test questions. Returns (work, gold)."""
    n = pairs + gold
    complex_sentences = [f"The {WORDS[i % len(WORDS)]} report number {i} was published yesterday by the agency."
                         for i in range(n)]
    simple_sentences = [f"The agency published report {i} about {WORDS[i % len(WORDS)]}." for i in range(n)]
    article = factories.make_article(project, title, {"adv": [complex_sentences[:n // 2], complex_sentences[n // 2:]],
                                                      "ele": [simple_sentences]})
    complex_doc, simple_doc = article.documents.order_by("rank")
    run = run or AlignmentRun.objects.create(project=project, method="jaccard", status=Status.SUCCEEDED)
    rows = [CandidatePair(article=article, complex_document=complex_doc, simple_document=simple_doc,
                          complex_key=indices_key([i]), simple_key=indices_key([i]), score=0.5,
                          predicted_label="aligned", origin=origin) for i in range(n)]
    created = CandidatePair.objects.bulk_create(rows)
    link_sentences(created)
    created = factories.predict(run, CandidatePair.objects.filter(article=article).order_by("id"))
    for pair in created[pairs:]:
        Adjudication.objects.create(pair=pair, value="aligned", provenance=Adjudication.IMPORTED)
    return created[:pairs], created[pairs:]


def set_qc(project, **settings) -> None:
    project.config = {**project.config, "qc": {"min_seconds": 0, "test_every": 0, **settings}}
    project.save()


def label_all(user, project, *, value="aligned", limit=1000) -> list[int]:
    """Let ``user`` work through their queue; returns the pair ids in the order served."""
    served = []
    for _ in range(limit):
        pair = labels.next_item(user, project)
        if pair is None:
            return served
        served.append(pair.pk)
        labels.submit(user, project, pair.pk, value=value)
    raise AssertionError("queue did not end")


@pytest.fixture
def annotators(users, project):
    from annotation.models import Membership

    extra = [factories.make_user(name) for name in ("bob", "cleo", "dan")]
    for user in extra:
        Membership.objects.create(project=project, user=user, role="annotator")
    return [users["anna"], *extra]


def test_it_serves_pairs_in_order_and_says_none_when_the_queue_is_empty(project, users):
    set_qc(project)
    work, _ = build_queue(project, 3)
    assert label_all(users["anna"], project) == [p.pk for p in work]
    assert labels.next_item(users["anna"], project) is None


def test_an_open_item_is_served_again_after_a_reload(project, users):
    set_qc(project)
    build_queue(project, 3)
    first = labels.next_item(users["anna"], project)
    assert labels.next_item(users["anna"], project) == first
    assert Assignment.objects.filter(annotator=users["anna"]).count() == 1


def test_no_pair_goes_to_more_annotators_than_the_overlap(project, annotators):
    set_qc(project, overlap=2)
    work, _ = build_queue(project, 5)
    for user in annotators:
        label_all(user, project)
    per_pair = {p.pk: Label.objects.filter(pair=p).count() for p in work}
    assert per_pair == {p.pk: 2 for p in work}
    assert Label.objects.count() == 10


def test_an_annotator_never_gets_the_same_pair_twice(project, users):
    set_qc(project, overlap=3)
    build_queue(project, 4)
    served = label_all(users["anna"], project)
    assert len(served) == len(set(served)) == 4


def test_a_skipped_pair_comes_back_after_every_fresh_one(project, users):
    set_qc(project)
    work, _ = build_queue(project, 3)
    anna = users["anna"]
    first = labels.next_item(anna, project)
    queue.skip(anna, project, first.pk)
    rest = label_all(anna, project)
    assert rest == [work[1].pk, work[2].pk, work[0].pk]


def test_a_skipped_pair_frees_its_place_for_someone_else(project, annotators):
    set_qc(project, overlap=1)
    work, _ = build_queue(project, 1)
    anna, bob = annotators[:2]
    queue.skip(anna, project, labels.next_item(anna, project).pk)
    assert labels.next_item(bob, project) == work[0]
    labels.submit(bob, project, work[0].pk, value="aligned")
    assert labels.next_item(anna, project) is None, "its only place is taken now"


def test_undo_deletes_the_last_label_and_serves_its_pair_again(project, users):
    set_qc(project)
    work, _ = build_queue(project, 3)
    anna = users["anna"]
    for pair in work[:2]:
        assert labels.next_item(anna, project) == pair
        labels.submit(anna, project, pair.pk, value="partial")
    assert labels.next_item(anna, project) == work[2]
    assert labels.undo(anna, project) == work[1]
    assert not Label.objects.filter(pair=work[1]).exists()
    assert labels.next_item(anna, project) == work[1]
    labels.submit(anna, project, work[1].pk, value="aligned")
    assert labels.next_item(anna, project) == work[2]
    assert dict(Label.objects.values_list("pair_id", "value")) == {work[0].pk: "partial", work[1].pk: "aligned"}


def test_undo_with_nothing_to_undo_says_so(project, users):
    set_qc(project)
    build_queue(project, 1)
    with pytest.raises(queue.NothingToUndo, match="nothing to undo"):
        labels.undo(users["anna"], project)


def test_the_queue_can_be_restricted_to_one_run(project, users):
    set_qc(project)
    build_queue(project, 2, title="A")
    other_run = AlignmentRun.objects.create(project=project, method="tfidf", status=Status.SUCCEEDED)
    chosen, _ = build_queue(project, 2, title="B", run=other_run)
    project.config["queue_run"] = other_run.pk
    project.save()
    assert label_all(users["anna"], project) == [p.pk for p in chosen]


def test_manual_and_derived_pairs_are_not_queued(project, users):
    set_qc(project)
    build_queue(project, 2, origin="manual")
    assert labels.next_item(users["anna"], project) is None


def test_submitting_a_pair_that_is_not_in_the_queue_is_refused(project, users):
    set_qc(project)
    work, _ = build_queue(project, 2)
    with pytest.raises(labelling.NotServed, match="not in your queue"):
        labels.submit(users["anna"], project, work[1].pk, value="aligned")


def test_one_hidden_test_question_comes_in_every_n_items(project, users):
    set_qc(project, test_every=5)
    work, gold = build_queue(project, 12, gold=5)
    served = label_all(users["anna"], project, value="aligned")
    tests = [pk for pk in served if pk in {g.pk for g in gold}]
    assert len(served) == 12 + len(tests)
    for block in range(0, len(served) - 4, 5):
        assert sum(pk in tests for pk in served[block:block + 5]) == 1
    assert Label.objects.filter(is_test_question=True).count() == len(tests) >= 2
    assert set(Label.objects.filter(is_test_question=True).values_list("pair_id", flat=True)) <= {g.pk for g in gold}
    assert not Label.objects.filter(pair__in=work, is_test_question=True).exists()


def test_test_questions_are_not_served_once_the_real_work_is_done(project, users):
    set_qc(project, test_every=1)
    build_queue(project, 0, gold=3)
    assert labels.next_item(users["anna"], project) is None


def test_the_item_payload_is_blind_unless_the_project_shows_predictions(project, users):
    set_qc(project)
    work, _ = build_queue(project, 1)
    payload = queue_items.item_payload(work[0], project)
    assert "prediction" not in payload and "score" not in payload
    assert payload["complex"]["sentences"][0]["text"].startswith("The alpha report number 0")
    assert payload["shape"] == "1:1"
    project.config["show_predictions"] = True
    assert queue_items.item_payload(work[0], project)["prediction"] == {"score": 0.5, "label": "aligned"}


def test_n_to_m_pairs_are_described_as_groups_of_consecutive_sentences(project, users):
    work, _ = build_queue(project, 6)
    pair = work[0]
    CandidatePair.objects.filter(pk=pair.pk).update(complex_key=indices_key([0, 1, 4]), simple_key=indices_key([2, 3]))
    pair.refresh_from_db()
    pair.members.all().delete()
    link_sentences([pair])
    payload = queue_items.item_payload(pair, project)
    assert payload["complex"]["groups"] == [[0, 1], [4]]
    assert payload["simple"]["groups"] == [[2, 3]]
    assert payload["shape"] == "3:2"


def test_the_context_holds_the_paragraph_and_the_neighbouring_sentences(project):
    work, _ = build_queue(project, 8)  # complex paragraphs: sentences 0-3 and 4-7
    context = queue_items.context(work[5])
    complex_side = context["complex"]
    assert [s["index"] for s in complex_side] == [3, 4, 5, 6, 7]
    assert [s["index"] for s in complex_side if s["in_pair"]] == [5]
    assert [s["index"] for s in context["simple"]] == [0, 1, 2, 3, 4, 5, 6, 7]


def test_progress_counts_done_and_remaining_items(project, users):
    set_qc(project)
    build_queue(project, 4)
    anna = users["anna"]
    labels.submit(anna, project, labels.next_item(anna, project).pk, value="aligned")
    assert queue_progress.progress(anna, project).as_dict() == {"done": 1, "remaining": 3, "total": 4}


def test_an_excluded_annotator_gets_no_more_items(project, users):
    set_qc(project)
    build_queue(project, 2)
    qc.exclude(users["anna"], project, "removed for the test")
    with pytest.raises(qc.AnnotatorExcluded, match="removed for the test"):
        labels.next_item(users["anna"], project)


def test_an_excluded_annotators_items_go_back_to_the_queue(project, annotators):
    set_qc(project, overlap=1)
    work, _ = build_queue(project, 2)
    anna, bob = annotators[:2]
    labels.submit(anna, project, labels.next_item(anna, project).pk, value="aligned")
    labels.next_item(anna, project)
    qc.exclude(anna, project, "low accuracy")
    assert label_all(bob, project) == [work[0].pk, work[1].pk]
