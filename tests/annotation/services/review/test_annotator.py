"""The annotator context (``review.annotator``): who is labelling, loaded once (one query) and carrying
their role, their exclusion and the project's QC settings to the gate and the queue."""
from __future__ import annotations

import pytest

from annotation.models import Membership
from annotation.services.review import annotator, qc
from tests.annotation.services.review.test_queue import set_qc

pytestmark = pytest.mark.django_db


def test_load_gives_each_members_role_in_one_query(project, users, django_assert_num_queries):
    with django_assert_num_queries(1):
        anna = annotator.load(users["anna"], project.pk)
    assert (anna.role, anna.exclusion, anna.reveal) == ("annotator", None, False)
    assert annotator.load(users["rita"], project.pk).role == "researcher"
    assert annotator.load(users["admin"], project.pk).role == "admin"  # staff, without a membership
    assert annotator.load(users["olga"], project.pk) is None  # a member of another project only
    assert annotator.load(users["anna"], 10 ** 9) is None


def test_of_reads_the_same_context_for_a_project_at_hand(project, users):
    loaded, at_hand = annotator.load(users["anna"], project.pk), annotator.of(users["anna"], project)
    assert (at_hand.role, at_hand.exclusion) == (loaded.role, loaded.exclusion)
    assert annotator.of(users["olga"], project).role is None


def test_an_excluded_annotator_is_told_why_and_may_not_label(project, users):
    qc.exclude(users["anna"], project, "too many wrong test answers")
    for actor in (annotator.load(users["anna"], project.pk), annotator.of(users["anna"], project)):
        assert actor.exclusion == "too many wrong test answers"
        actor.ensure_member()  # still a member: they may read their labels
        with pytest.raises(qc.AnnotatorExcluded, match="too many wrong test answers"):
            actor.ensure_may_label()


def test_a_removed_or_deactivated_member_is_refused_as_not_a_member(project, users):
    stale = annotator.of(users["anna"], project)
    Membership.objects.filter(project=project, user=users["anna"]).delete()
    with pytest.raises(annotator.NotMember):
        annotator.of(users["anna"], project).ensure_member()
    rita = annotator.of(users["rita"], project)
    users["rita"].is_active = False
    with pytest.raises(annotator.NotMember):
        rita.ensure_member()
    stale.ensure_member()  # built before the removal: the gate re-loads it per write, not this object


def test_the_qc_settings_are_parsed_once_per_context(project, users, django_assert_num_queries):
    set_qc(project, overlap=2, min_seconds=3)
    actor = annotator.load(users["anna"], project.pk)
    with django_assert_num_queries(0):
        config = actor.qc_config
        assert actor.qc_config is config
    assert (config.overlap, config.min_seconds) == (2, 3)


def test_the_compiled_load_reads_fresh_data_every_time(project, users, django_assert_num_queries):
    """Issue 37: the seat's query is compiled once per process (its SQL, not its answer): a changed role,
    exclusion, config or scheme is read by the very next load, and the project and scheme are whole models."""
    first = annotator.load(users["anna"], project.pk)
    assert first.project == project and first.project.label_scheme == project.label_scheme
    Membership.objects.filter(project=project, user=users["anna"]).update(role="researcher")
    set_qc(project, overlap=3)
    project.label_scheme.name = "Renamed"
    project.label_scheme.save()
    with django_assert_num_queries(1):
        again = annotator.load(users["anna"], project.pk)
        assert (again.role, again.qc_config.overlap, again.project.label_scheme.name) == ("researcher", 3, "Renamed")
        assert (again.project.name, again.project.created_at, again.project.config) == (
            project.name, project.created_at, project.config)
    qc.exclude(users["anna"], project, "too fast")
    assert annotator.load(users["anna"], project.pk).exclusion == "too fast"
    assert annotator.load(users["olga"], project.pk) is None and annotator.load(users["anna"], 10 ** 9) is None


def test_the_counts_come_with_the_seat(project, users, django_assert_num_queries):
    """A queue submit reads the annotator's counts and their assignment of the pair with the seat, in
    its one query; they are those ``my_counts`` reads on its own."""
    from annotation.services.review import queue_serving
    from tests import labels
    from tests.annotation.services.review.test_queue import build_queue

    set_qc(project)
    build_queue(project, 3)
    done = labels.next_item(users["anna"], project)
    labels.submit(users["anna"], project, done.pk, value="aligned")
    served = labels.next_item(users["anna"], project)
    annotator.load(users["anna"], project.pk, counts=True, pair_id=served.pk)  # (SQLite checks its JSON support once)
    with django_assert_num_queries(1):
        seat = annotator.load(users["anna"], project.pk, counts=True, pair_id=served.pk)
    alone = queue_serving.my_counts(users["anna"], project, served.pk)
    assert (seat.mine.total, seat.mine.done, seat.mine.open, seat.mine.seen) == (alone.total, alone.done, alone.open,
                                                                                  alone.seen) == (2, 1, 1, 2)
    assert (seat.mine.target.pk, seat.mine.target.status, seat.mine.target.assigned_at) == (
        alone.target.pk, "open", alone.target.assigned_at)
    assert annotator.load(users["rita"], project.pk, counts=True).mine.total == 0  # no assignment: zeros
