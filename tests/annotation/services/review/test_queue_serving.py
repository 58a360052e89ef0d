"""Claiming the next pair (``queue_serving``): what it costs the database.

Issue 37: at 100,000 pairs the claim of the next fresh pair took 27 ms of a 42-ms submit, because
the walk in id order counted every already-taken pair's assignments in a correlated subquery. With
one annotator a pair (the default overlap) it is now an anti-join (NOT EXISTS an active assignment),
which PostgreSQL merges with the assignment pair index; the same statements are issued whatever
how much of the queue is labelled."""
from __future__ import annotations

import re

from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Label
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
