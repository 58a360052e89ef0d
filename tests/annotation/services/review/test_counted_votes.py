"""Which labels count as votes (``review.counted_votes``): no hidden test answers, no label of an excluded
annotator; the excluded annotators as a subquery."""
from __future__ import annotations

import pytest

from annotation.models import Label, Membership
from annotation.services.review import counted_votes, qc
from tests import labels
from tests.annotation.services.review.test_queue import build_queue, set_qc

pytestmark = pytest.mark.django_db


def test_excluded_annotators_labels_stop_counting(project, users):
    set_qc(project, overlap=2)
    work, _ = build_queue(project, 2)
    bob = users["rita"]  # a researcher may label too
    for user in (users["anna"], bob):
        for _ in work:
            labels.submit(user, project, labels.next_item(user, project).pk, value="aligned")
    assert counted_votes.counted_labels(project).count() == 4
    qc.exclude(users["anna"], project, "low accuracy")
    assert set(counted_votes.counted_labels(project).values_list("annotator__username", flat=True)) == {"rita"}


def test_test_answers_are_not_counted_as_votes(project, users):
    set_qc(project, test_every=1)
    build_queue(project, 2, gold=2)
    anna = users["anna"]
    while (pair := labels.next_item(anna, project)) is not None:
        labels.submit(anna, project, pair.pk, value="aligned")
    assert Label.objects.filter(is_test_question=True).exists()
    assert not counted_votes.counted_labels(project).filter(is_test_question=True).exists()


def test_the_excluded_annotators_are_a_subquery_of_user_ids(project, users):
    assert list(counted_votes.excluded_annotators(project)) == []
    qc.exclude(users["anna"], project, "low accuracy")
    excluded = counted_votes.excluded_annotators(project)
    assert [row["user_id"] for row in excluded] == [users["anna"].pk]
    assert list(Membership.objects.filter(user_id__in=excluded).values_list("user__username", flat=True)) == ["anna"]
