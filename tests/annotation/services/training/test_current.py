"""The training set now (``training.current``): built once per state of the project's data and kept in the
cache; anything the set is computed from changes the state, so the next reader builds it again."""
from __future__ import annotations

import pytest
from django.core.cache import cache

from annotation.models import ArticleCompletion, Label, Membership
from annotation.services.training import current, dataset

from .test_training import completed  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db


@pytest.fixture
def counted_builds(monkeypatch):
    cache.clear()
    built = []
    real = dataset.training_set
    monkeypatch.setattr(dataset, "training_set", lambda p: built.append(p.pk) or real(p))
    return built


def test_the_set_is_built_once_while_the_data_stay_the_same(project, completed, counted_builds):  # noqa: F811
    first = current.current_training_set(project)
    again = current.current_training_set(project)
    assert counted_builds == [project.pk] and again.snapshot == first.snapshot
    assert current.training_summary(project).snapshot == first.snapshot and counted_builds == [project.pk]


def test_a_label_a_completion_or_an_exclusion_changes_the_state(project, users, completed):  # noqa: F811
    states = [current.data_state(project)]
    Label.objects.filter(annotator=users["anna"]).first().delete()
    states.append(current.data_state(project))
    ArticleCompletion.objects.all().delete()
    states.append(current.data_state(project))
    Membership.objects.filter(project=project, user=users["anna"]).update(excluded_at="2026-01-01T00:00:00Z")
    states.append(current.data_state(project))
    project.config = {**project.config, "note": "changed"}
    project.save()
    states.append(current.data_state(project))
    assert len(set(states)) == len(states)
    assert current.data_state(project) == states[-1]  # nothing changed: the same state


def test_a_change_rebuilds_the_set_and_the_summary_follows(project, completed, counted_builds):  # noqa: F811
    before = current.training_summary(project)
    assert before.refusal is None and counted_builds == [project.pk]
    ArticleCompletion.objects.all().delete()
    after = current.training_summary(project)
    assert counted_builds == [project.pk, project.pk] and after.refusal is not None
    held = cache.get(f"training-set:{project.pk}")  # the project's newest set only
    assert held[0] == current.data_state(project)
