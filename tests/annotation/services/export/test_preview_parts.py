"""The gold export preview summed from stored per-article parts (issue 37): it equals the full reading
(``compute_preview``) for every option and after every kind of change, and a change to one article
computes that article's part only."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from annotation.models import Adjudication, ArticleCompletion, Label, Membership, PreviewPart
from annotation.services import export
from annotation.services.export import preview_parts
from tests import factories

from .conftest import gold, make_pair, vote

OPTIONS = [
    {"derived": False, "drop_identical": False},
    {},  # derived pairs on, identical pairs dropped from training formats
    {"label_policy": "majority", "labels": ["aligned"]},
    {"label_policy": "stored", "provenance": ["adjudicated", "imported"]},
    {"thresholds": [{"key": "score", "op": "gte", "value": 0.5}], "splits": ["train", "test"]},
]


def fresh(project, options) -> dict:
    return {**export.compute_preview(project, options), "seconds": None}


def stored(project, options) -> dict:
    return {**preview_parts.preview(project, options, max_seconds=60), "seconds": None}


@pytest.fixture
def computed(monkeypatch):
    """The articles whose parts each preview computed, one list per call."""
    calls: list[list[int]] = []
    original = preview_parts.compute_parts

    def spy(project, options, planned, articles, **kwargs):
        calls.append(list(articles))
        return original(project, options, planned, articles, **kwargs)

    monkeypatch.setattr(preview_parts, "compute_parts", spy)
    return calls


@pytest.mark.parametrize("raw", OPTIONS)
def test_the_preview_from_parts_equals_the_full_reading(newsela, raw, computed):
    project, options = newsela["project"], export.ExportOptions.parse(raw)
    assert stored(project, options) == fresh(project, options)
    assert computed == [sorted({newsela["bees"].pk, newsela["owls"].pk})]
    assert stored(project, options) == fresh(project, options) and len(computed) == 1  # nothing read again


def test_after_each_kind_of_change_the_parts_equal_the_full_reading_and_only_the_changed_article_is_read(
        newsela, computed):
    """Label, edit, removal, a test question, gold, its change, a completion and its removal: that
    article's part only; an exclusion, a settings change, an import, a split: equal to the full reading."""
    project, options = newsela["project"], export.ExportOptions.parse({"derived": False, "drop_identical": False})
    bees, owls = newsela["bees"], newsela["owls"]
    stored(project, options)
    pair = make_pair(owls, "0", "1", [1], [0])
    article_changes = [
        lambda: vote(pair, "dan", "partial"),
        lambda: Label.objects.filter(pair=pair).update(value="aligned", updated_at=timezone.now()),
        lambda: vote(pair, "bea", "not-aligned"),
        lambda: Label.objects.filter(pair=pair, annotator__username="bea").delete(),
        lambda: Label.objects.filter(pair=pair).update(is_test_question=True),
        lambda: gold(pair, "partial"),
        lambda: Adjudication.objects.filter(pair=pair).update(value="aligned", created_at=timezone.now()),
        lambda: _complete(owls, "cal"),
        lambda: ArticleCompletion.objects.filter(article=owls).delete(),
    ]
    for i, change in enumerate(article_changes):
        stored(project, options)
        computed.clear()
        change()
        after = stored(project, options)
        assert after == fresh(project, options), i
        assert computed == [[owls.pk]], i
    project_changes = [
        lambda: Membership.objects.filter(project=project, user__username="anna").update(excluded_at=timezone.now()),
        lambda: _set_config(project, {"qc": {"overlap": 3}}),
        lambda: _import(project),
        lambda: export.splits.set_split(bees, "test"),
    ]
    for i, change in enumerate(project_changes):
        change()
        assert stored(project, options) == fresh(project, options), i
    assert PreviewPart.objects.filter(project=project).values("article").distinct().count() == \
        PreviewPart.objects.filter(project=project).count()  # one part an article and options: stale ones replaced


def test_each_set_of_options_keeps_its_parts(newsela, computed):
    """Previewing with other options and back reads nothing again (each set of options has its parts)."""
    project = newsela["project"]
    one, other = (export.ExportOptions.parse(raw) for raw in ({"derived": False}, {"label_policy": "majority"}))
    for options in (one, other, one, other):
        assert stored(project, options) == fresh(project, options)
    assert len(computed) == 2


def test_a_preview_over_its_budget_is_partial_and_the_next_call_goes_on(newsela, monkeypatch):
    project, options = newsela["project"], export.ExportOptions.parse({"derived": False})
    monkeypatch.setattr(preview_parts, "CHUNK", 1)
    first = preview_parts.preview(project, options, max_seconds=0)
    assert first["partial"] and first["articles_seen"] == first["articles_total"] - 1
    second = preview_parts.preview(project, options, max_seconds=0)
    assert not second["partial"] and {**second, "seconds": None} == fresh(project, options)


def test_the_api_preview_keeps_no_partial_answer(newsela, monkeypatch):
    """A partial preview is not kept in the cache: the next call computes the rest."""
    project, options = newsela["project"], export.ExportOptions.parse({"derived": False})
    monkeypatch.setattr(preview_parts, "CHUNK", 1)
    assert export.preview(project, options, max_seconds=0)["partial"]
    assert not export.preview(project, options, max_seconds=0)["partial"]


def _complete(article, username: str) -> None:
    c, s = article.documents.order_by("rank")[:2]
    ArticleCompletion.objects.create(article=article, complex_document=c, simple_document=s,
                                     annotator=get_user_model().objects.get(username=username))


def _set_config(project, extra: dict) -> None:
    project.config = {**(project.config or {}), **extra}
    project.save()


def _import(project) -> None:
    article = factories.make_article(project, "Bats", {"0": [["Bats fly at night."]], "1": [["Bats fly."]]})
    gold(make_pair(article, "0", "1", [0], [0]), "aligned", Adjudication.IMPORTED)


def test_after_a_restart_the_same_state_answers_from_the_stored_answer_and_a_change_computes_again(
        newsela, computed, django_assert_max_num_queries):
    """The answer is kept in the database per options and state of the data (the dashboard's marks): the
    first preview after a restart reads no article's marks; after a label it equals the full reading."""
    from django.core.cache import cache

    project, options = newsela["project"], export.ExportOptions.parse({"derived": False})
    first = {**export.preview(project, options), "seconds": None}
    assert first == fresh(project, options)
    cache.clear()  # as after a restart
    with django_assert_max_num_queries(14):  # the state's marks and the stored answer
        assert {**export.preview(project, options), "seconds": None} == first
    assert len(computed) == 1
    vote(make_pair(newsela["owls"], "0", "1", [1], [0]), "dan", "aligned")
    cache.clear()
    assert {**export.preview(project, options), "seconds": None} == fresh(project, options) != first
