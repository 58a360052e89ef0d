"""The queue's frontier (``queue_serving``, issue 37): serving starts at the project's first pair with a
free place instead of walking every pair already taken, and every change that frees a place below it
(or puts a pair back in the queue) lowers it, so the queue still serves the right pair.

Each test moves the frontier up by labelling, makes one change below it, and checks who is served
what next. ``FRONTIER_GAP`` is 0 here so that every claim past the frontier moves it (in production it
moves once every few dozen claims). PostgreSQL only: the triggers that lower it are PostgreSQL's."""
from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Assignment, CandidatePair, Label, Membership, QueueFrontier
from annotation.services.review import adjudication, qc, queue, queue_serving
from annotation.services.settings import project_settings
from tests import labels
from tests.annotation.services.review.test_queue import annotators, build_queue, set_qc  # noqa: F401 - fixture

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="the frontier is PostgreSQL's (triggers)")


@pytest.fixture(autouse=True)
def move_on_every_claim(monkeypatch):
    monkeypatch.setattr(queue_serving, "FRONTIER_GAP", 0)


def frontier(project) -> int:
    return QueueFrontier.objects.get(project=project).below


def moved(project) -> int:
    """The frontier once moved up to the first pair with a free place (serving moves it once a claim
    lands past it, so it may lag one claim behind)."""
    queue_serving.advance_frontier(project, qc.qc_config(project), Membership.objects.excluded(project))
    return frontier(project)


def queue_of(project, pairs: int) -> list:
    """A queue of ``pairs`` pairs, one annotator a pair."""
    set_qc(project, overlap=1)
    return build_queue(project, pairs)[0]


def label_first(user, project, n: int) -> list[int]:
    served = []
    for _ in range(n):
        pair = labels.next_item(user, project)
        served.append(pair.pk)
        labels.submit(user, project, pair.pk, value="aligned")
    return served


def test_labelling_moves_the_frontier_to_the_first_pair_with_a_free_place(project, annotators):  # noqa: F811
    work = queue_of(project, 6)
    anna, bob = annotators[:2]
    assert label_first(anna, project, 4) == [p.pk for p in work[:4]]
    assert work[3].pk <= frontier(project) <= work[4].pk, "at most the last claim behind"
    assert labels.next_item(bob, project) == work[4]


def test_the_inline_claim_of_submit_and_next_moves_it_too(project, annotators):  # noqa: F811
    work = queue_of(project, 6)
    anna = annotators[0]
    pair = labels.next_item(anna, project)
    for _ in range(3):
        _, _, state = labels.submit_and_next(anna, project, pair.pk, value="aligned")
        pair = CandidatePair.objects.get(pk=state["item"]["pair"])
    assert pair == work[3]
    assert work[2].pk <= frontier(project) <= work[4].pk, "work[3] is open (taken)"


def test_a_claim_starts_at_the_frontier_and_walks_the_same_rows_however_much_is_labelled(
        project, annotators):  # noqa: F811
    set_qc(project, overlap=1)
    work, _ = build_queue(project, 40)
    anna, bob = annotators[:2]

    def walked() -> tuple[str, int]:
        config, excluded = qc.qc_config(project), Membership.objects.excluded(project)
        # a table of 40 pairs may be planned as a sequential scan, depending on when autovacuum last analysed
        # it (a full run's flake); the question here is where the index walk starts, as it does at 1M pairs
        with connection.cursor() as cursor:
            cursor.execute("SET enable_seqscan = off")
        try:
            plan = queue_serving.available(bob, project, config, excluded)[:1].explain(analyze=True)
        finally:
            with connection.cursor() as cursor:
                cursor.execute("RESET enable_seqscan")
        scan = next(line for line in plan.splitlines() if "annotation_candidatepair" in line and "Index" in line)
        return plan, int(re.search(r"actual time=\S+ rows=(\d+)", scan).group(1))

    label_first(anna, project, 32)
    assert moved(project) == work[32].pk
    late_plan, late = walked()
    assert re.search(r"Index Cond: \(.*id >= COALESCE", late_plan), late_plan
    # the anti-joins' assignment and gold sides start there too (a merge join would read them from the start)
    assert late_plan.count("pair_id >= COALESCE") >= 3, late_plan
    assert late <= len(work) - 32, "only pairs from the frontier on are read"
    QueueFrontier.objects.filter(project=project).update(below=work[0].pk)  # as if there were none
    assert walked()[1] > 32, "without it the walk passes every taken pair"
    assert labels.next_item(bob, project) == work[32]


def test_a_skipped_pair_below_the_frontier_is_served_to_the_next_annotator(project, annotators):  # noqa: F811
    work = queue_of(project, 6)
    anna, bob = annotators[:2]
    label_first(anna, project, 3)
    assert labels.next_item(anna, project) == work[3]
    assert moved(project) == work[4].pk
    queue.skip(anna, project, work[3].pk)
    assert frontier(project) == work[3].pk, "the skip gave its place back"
    assert labels.next_item(bob, project) == work[3]


def test_after_an_undo_the_undone_pair_comes_back_to_its_annotator_and_nobody_else_gets_it(
        project, annotators):  # noqa: F811
    work = queue_of(project, 6)
    anna, bob = annotators[:2]
    label_first(anna, project, 4)
    assert labels.undo(anna, project) == work[3]
    assert labels.next_item(anna, project) == work[3]
    assert labels.next_item(bob, project) == work[4], "the undone pair is open again: its place is taken"


def test_an_excluded_annotators_pairs_go_back_to_the_queue(project, annotators):  # noqa: F811
    work = queue_of(project, 6)
    anna, bob = annotators[:2]
    label_first(anna, project, 4)
    qc.exclude(anna, project, "accuracy")
    assert frontier(project) == work[0].pk, "an exclusion frees places anywhere: start again"
    assert labels.next_item(bob, project) == work[0]
    assert Label.objects.filter(annotator=anna).count() == 4, "their labels stay"


def test_a_removed_members_open_item_goes_back_to_the_queue(project, annotators):  # noqa: F811
    work = queue_of(project, 6)
    anna, bob, cleo = annotators[:3]
    label_first(bob, project, 1)
    assert labels.next_item(anna, project) == work[1]  # open, never labelled
    label_first(bob, project, 2)
    assert moved(project) == work[4].pk
    project_settings.remove_member(project, Membership.objects.get(project=project, user=anna).pk)
    assert not Assignment.objects.filter(annotator=anna).exists()
    assert labels.next_item(cleo, project) == work[1]


def test_a_pair_whose_gold_is_removed_is_work_again(project, annotators, users):  # noqa: F811
    work = queue_of(project, 6)
    anna, bob = annotators[:2]
    adjudication.decide(work[1], "aligned", users["rita"])  # gold: out of the queue
    assert label_first(anna, project, 3) == [work[0].pk, work[2].pk, work[3].pk]
    assert frontier(project) > work[1].pk
    assert adjudication.revert(work[1], users["rita"]) is None  # the gold is gone
    assert labels.next_item(bob, project) == work[1]


def test_a_settings_change_starts_the_frontier_again(project, annotators):  # noqa: F811
    work = queue_of(project, 6)
    anna, bob = annotators[:2]
    label_first(anna, project, 4)
    project_settings.update_qc(project, qc.QcConfig.parse({"overlap": 2, "min_seconds": 0, "test_every": 0}))
    project.refresh_from_db()
    assert frontier(project) == work[0].pk
    assert labels.next_item(bob, project) == work[0], "the first pair's second place"


def test_a_pair_put_back_into_the_queue_or_added_lowers_it(project, annotators):  # noqa: F811
    work = queue_of(project, 6)
    anna, bob = annotators[:2]
    CandidatePair.objects.filter(pk=work[1].pk).update(origin="manual")  # not queue work
    label_first(anna, project, 3)
    assert frontier(project) > work[1].pk
    CandidatePair.objects.filter(pk=work[1].pk).update(origin="model")
    assert frontier(project) == work[1].pk
    assert labels.next_item(bob, project) == work[1]
    # a pair written by a transaction that committed after the frontier passed its id (two chunks of a
    # run saving at once; here the frontier is simply set past it): its insert lowers the frontier to it
    QueueFrontier.objects.filter(project=project).update(below=10**12)
    more, _ = build_queue(project, 2, title="Another article")
    assert frontier(project) == more[0].pk
    assert labels.next_item(annotators[2], project) == more[0]


def test_with_two_annotators_a_pair_it_passes_only_full_pairs(project, annotators):  # noqa: F811
    set_qc(project, overlap=2)
    work, _ = build_queue(project, 6)
    anna, bob, cleo = annotators[:3]
    label_first(anna, project, 3)
    assert moved(project) == work[0].pk, "one place of each is still free"
    label_first(bob, project, 2)
    assert moved(project) == work[2].pk
    assert labels.next_item(cleo, project) == work[2], "work[2]'s second place"


def test_the_frontier_is_not_used_for_other_orders_or_a_runs_queue(project, annotators):  # noqa: F811
    set_qc(project, overlap=1)
    build_queue(project, 3)
    project.config = {**project.config, "queue_order": "random"}
    assert not queue_serving.frontier_applies(project)
    project.config = {**project.config, "queue_order": "corpus", "queue_run": 1}
    assert not queue_serving.frontier_applies(project)


def test_serving_issues_the_same_statements_with_the_frontier_far_behind(project, annotators):  # noqa: F811
    """A claim's statements do not grow with the pairs taken: when the frontier has to move, that is
    three short statements after the claim (its row, the first free pair, the update)."""
    set_qc(project, overlap=1)
    build_queue(project, 8)
    anna, bob = annotators[:2]
    label_first(anna, project, 5)
    with CaptureQueriesContext(connection) as queries:
        labels.next_item(bob, project)
    frontier_sql = [q["sql"] for q in queries.captured_queries if "annotation_queuefrontier" in q["sql"]]
    assert len(frontier_sql) <= 3, frontier_sql
