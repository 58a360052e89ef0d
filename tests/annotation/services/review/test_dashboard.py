"""Dashboard numbers: per-annotator progress and speed, test accuracy, exclusion, label counts, runs."""
from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from annotation.models import Adjudication, AlignmentRun, Label, Membership, Status
from annotation.services.review import adjudication, dashboard, qc
from tests import factories
from tests.annotation.services.review.test_adjudication import make_pairs, vote


def test_each_annotator_has_a_row_even_before_labelling(project, users):
    rows = dashboard.annotator_progress(project)
    assert [(r["annotator"], r["labelled"], r["items_per_hour"], r["excluded"]) for r in rows] == [
        ("anna", 0, None, False)]


def test_speed_comes_from_time_on_item_and_from_timestamps_without_breaks(project, users):
    anna = users["anna"]
    pairs = make_pairs(project, 4)
    start = timezone.now() - timedelta(hours=3)
    # three labels a minute apart, then a two-hour break, then one more
    for pair, at in zip(pairs, [start, start + timedelta(seconds=60), start + timedelta(seconds=120),
                                start + timedelta(hours=2)]):
        Label.objects.create(pair=pair, annotator=anna, value="aligned", seconds=30, created_at=at)
    [row] = dashboard.annotator_progress(project)
    assert row["labelled"] == 4 and row["seconds"] == 120 and row["mean_seconds"] == 30
    assert row["items_per_hour"] == 120.0  # 4 items in 120 s on item
    # wall clock: 30 s (first item) + 60 + 60 (the break does not count) = 150 s → 96 items/hour
    assert row["items_per_hour_wall"] == 96.0


def test_test_accuracy_and_exclusion_are_reported(project, users):
    anna = users["anna"]
    pairs = make_pairs(project, 3)
    for pair in pairs[:2]:
        Adjudication.objects.create(pair=pair, value="aligned", provenance=Adjudication.IMPORTED)
    vote(pairs[0], anna, "aligned", test=True)
    vote(pairs[1], anna, "partial", test=True)
    vote(pairs[2], anna, "aligned")
    qc.exclude(anna, project, "Test accuracy 50% below 85%.")
    [row] = dashboard.annotator_progress(project)
    assert (row["labelled"], row["test_answers"], row["test_accuracy"]) == (1, 2, 0.5)
    assert row["excluded"] and row["exclusion_reason"] == "Test accuracy 50% below 85%."


def test_label_counts_show_votes_and_gold_per_scheme_value(project, users):
    bob = factories.make_user("bob")
    Membership.objects.create(project=project, user=bob, role="annotator")
    one, two = make_pairs(project, 2)
    vote(one, users["anna"], "aligned"), vote(one, bob, "partial"), vote(two, bob, "aligned")
    adjudication.decide(one, "partial", users["rita"])
    counts = {v["value"]: (v["votes"], v["gold"]) for v in dashboard.label_counts(project)["values"]}
    # gold: what exports read (issue 34: was stored gold only) — "two" has one vote, single gold under the default
    assert counts == {"aligned": (2, 1), "partial": (1, 1), "not-aligned": (0, 0)}


def test_project_progress_counts_labelled_pairs_gold_and_the_review_queue(project, users):
    bob = factories.make_user("bob")
    Membership.objects.create(project=project, user=bob, role="annotator")
    one, two, three = make_pairs(project, 3)
    vote(one, users["anna"], "aligned"), vote(one, bob, "partial"), vote(two, bob, "aligned")
    progress = dashboard.project_progress(project)
    assert (progress["pairs"], progress["labelled_pairs"], progress["votes"], progress["review_queue"]) == (3, 2, 3, 1)
    assert progress["fully_labelled_pairs"] == 2 and progress["overlap"] == 1


def test_runs_are_listed_newest_first_with_their_progress(project):
    AlignmentRun.objects.create(project=project, method="tfidf", status=Status.SUCCEEDED, progress=100, pair_count=7)
    running = AlignmentRun.objects.create(project=project, method="sbert", status=Status.RUNNING, progress=40)
    runs = dashboard.dashboard(project)["runs"]
    assert [(r["id"], r["status"], r["progress"]) for r in runs][0] == (running.pk, "running", 40)
    assert runs[1]["pair_count"] == 7


def test_the_runs_new_pairs_are_kept_per_state_of_the_runs_and_a_label_does_not_read_them_again(project, users):
    """Issue 37: the ``runs`` figure's "new pairs" anti-join reads every prediction (2 of its 2.3 s at 3 × 1,000,000);
    a label does not change it, so the figures job after a label reads it back; a run and its predictions do."""
    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotation.models import CandidatePair, Prediction

    cache.clear()
    one, two, three = make_pairs(project, 3)
    first = AlignmentRun.objects.create(project=project, method="tfidf", status=Status.SUCCEEDED, pair_count=2)
    Prediction.objects.bulk_create([Prediction(run=first, pair=p, score=0.5) for p in (one, two)])
    compute = dashboard._computations(project)["runs"]
    assert compute() == dashboard.run_statuses(project)
    vote(one, users["anna"], "aligned")
    with CaptureQueriesContext(connection) as asked:
        after_label = compute()
    assert after_label == dashboard.run_statuses(project) and after_label[0]["labelled_pairs"] == 1
    assert not [q["sql"] for q in asked if "NOT EXISTS" in q["sql"]]  # the new pairs read back, not computed
    only_second = CandidatePair.objects.create(article=three.article, complex_document=three.complex_document,
                                               simple_document=three.simple_document, complex_key="9", simple_key="9")
    second = AlignmentRun.objects.create(project=project, method="sbert", status=Status.SUCCEEDED, pair_count=2)
    Prediction.objects.bulk_create([Prediction(run=second, pair=p, score=0.5) for p in (two, only_second)])
    after_run = compute()
    assert after_run == dashboard.run_statuses(project)
    assert {r["id"]: r["new_pairs"] for r in after_run}[second.pk] == 1  # the state moved: not the kept figure
