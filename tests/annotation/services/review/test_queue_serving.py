"""Claiming the next pair (``queue_serving``): what it costs the database.

Issue 37: at 100,000 pairs the claim of the next fresh pair took 27 ms of a 42-ms submit, because
the walk in id order counted every already-taken pair's assignments in a correlated subquery. With
one annotator a pair (the default overlap) it is now an anti-join (NOT EXISTS an active assignment),
which PostgreSQL merges with the assignment pair index; the same statements are issued whatever
how much of the queue is labelled."""
from __future__ import annotations

import re

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from annotation.models import Assignment, CandidatePair, Label, Membership
from annotation.services.review import qc, queue_serving
from tests import labels
from tests.annotation.services.review.test_queue import annotators, build_queue, set_qc  # noqa: F401 - fixture


def claim_statements(user, project) -> tuple[list[str], int]:
    """The SQL that serving ``user`` their next item runs (its values blanked), and the pair served."""
    with CaptureQueriesContext(connection) as queries:
        pair = labels.next_item(user, project)
    shapes = [re.sub(r"\b\d+\b|'[^']*'", "?", q["sql"]) for q in queries.captured_queries
              if "SAVEPOINT" not in q["sql"]]
    return shapes, pair.pk


def test_with_one_annotator_a_pair_the_claim_is_an_anti_join_of_the_same_shape_however_much_is_labelled(
        project, annotators):  # noqa: F811 - the fixture
    set_qc(project, overlap=1)
    work, _ = build_queue(project, 8)
    anna, bob = annotators[:2]
    early, first = claim_statements(anna, project)
    labels.submit(anna, project, first, value="aligned")
    for _ in range(5):  # most of the queue taken before bob's first claim
        labels.submit(anna, project, labels.next_item(anna, project).pk, value="aligned")
    late, served = claim_statements(bob, project)
    assert served == work[6].pk, "still the first pair with a free place, in id order"
    assert early == late, "the same statements whatever how much is labelled"
    claim = [sql for sql in late if "FROM \"annotation_candidatepair\"" in sql and "LIMIT" in sql]
    assert claim and all("COUNT(" not in sql for sql in claim), "no per-pair count of the assignments"
    assert all("NOT (EXISTS" in sql or "NOT EXISTS" in sql for sql in claim)
    assert Label.objects.filter(pair_id__in=[p.pk for p in work]).count() == 6


def test_with_two_annotators_a_pair_the_places_are_still_counted(project, annotators):  # noqa: F811
    set_qc(project, overlap=2)
    work, _ = build_queue(project, 2)
    anna, bob, cleo = annotators[:3]
    assert labels.next_item(anna, project) == work[0]
    assert labels.next_item(bob, project) == work[0], "its second place"
    assert labels.next_item(cleo, project) == work[1], "the first pair is full"


def test_the_claim_is_compiled_once_per_process_for_every_annotator(project, annotators, monkeypatch):  # noqa: F811
    """Issue 37: building and compiling the claim's query was a few ms of Python on every label. It is
    compiled once per project and settings and reused for every annotator, with their own id."""
    set_qc(project, overlap=1)
    work, _ = build_queue(project, 4)
    anna, bob, cleo = annotators[:3]
    assert labels.next_item(anna, project) == work[0]
    built = []
    monkeypatch.setattr(queue_serving, "available", lambda *args: built.append(args) or real_available(*args))
    assert labels.next_item(bob, project) == work[1] and labels.next_item(cleo, project) == work[2]
    assert not built, "the compiled claim was reused"
    assert Assignment.objects.filter(pair=work[0]).get().annotator == anna
    assert Assignment.objects.filter(pair=work[1]).get().annotator == bob
    assert Assignment.objects.filter(pair=work[2]).get().annotator == cleo


real_available = queue_serving.available


def test_a_changed_setting_is_compiled_anew_never_served_stale(project, annotators):  # noqa: F811
    """The compiled claim is kept under everything its SQL depends on (the QC settings, the project's
    config): changing one between two claims in the same process serves by the new setting at once."""
    set_qc(project, overlap=1)
    work, _ = build_queue(project, 4)
    CandidatePair.objects.filter(pk=work[1].pk).update(identical=True)  # not queued unless queue_identical
    anna, bob, cleo, dan = annotators
    assert labels.next_item(anna, project) == work[0]
    assert labels.next_item(bob, project) == work[2], "one place a pair, the identical pair not queued"
    set_qc(project, overlap=2)
    assert labels.next_item(cleo, project) == work[0], "two places: its second place, not a stale full pair"
    project.config = {**project.config, "queue_identical": True}
    project.save()
    assert labels.next_item(dan, project) == work[1], "identical pairs queued now (the first pair is full)"


@pytest.mark.parametrize("overlap,holder", [(1, "bob"), (2, "anna")])
def test_the_claims_insert_re_counts_the_places_and_never_assigns_twice(project, annotators, monkeypatch, overlap,  # noqa: F811
                                                                         holder):
    """The conditional INSERT counts the pair's places in its own statement, after the lock (its snapshot
    is newer than the candidate query's): a pair that is full by then, or that the annotator already has,
    is not assigned, and the attempt is retried."""
    set_qc(project, overlap=overlap)
    work, _ = build_queue(project, 2)
    anna, bob = annotators[:2]
    Assignment.objects.create(pair=work[0], annotator=anna if holder == "anna" else bob)
    monkeypatch.setattr(queue_serving, "_lock_first_available", lambda *args, **kwargs: (work[0].pk,))
    with pytest.raises(queue_serving.Retry), transaction.atomic():
        queue_serving.claim(anna, project, qc.qc_config(project), Membership.objects.excluded(project), wait=False)
    assert Assignment.objects.filter(pair=work[0]).count() == 1
