"""Honest model metrics (issue 18 §5) and the promote guard (issue 21 §4): one definition of the
exhaustively annotated articles for training and metrics, warnings beside a version, a confirmation
before a worse version becomes the default, and the Models page's count of complete articles."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, ArticleCompletion, AuditEvent, ModelVersion, indices_key
from annotation.services.alignment import run_options
from annotation.services.review import exhaustive
from annotation.services.training import dataset, metrics
from annotation.services.training import versions as training
from tests import factories


def scores(t1: float, t2: float) -> dict:
    return {"task1": {"f1": t1}, "task2": {"f1": t2}}


def version(project, name, *, this, untrained=(0.70, 0.55), n=6, pairs=None, **test) -> ModelVersion:
    articles = [{"id": i, "title": f"A{i}"} for i in range(n)]
    return ModelVersion.objects.create(project=project, name=name, kind="crf", path="/nowhere", metrics={"test": {
        "n_article_pairs": n, "n_articles": n, "articles": articles, "pairs": pairs or [f"{i}:1-2" for i in range(n)],
        "this": scores(*this), "untrained": scores(*untrained), **test}})


def make_default(project, v: ModelVersion) -> None:
    project.config = {**(project.config or {}), "default_model_version": v.pk}
    project.save(update_fields=["config"])


@pytest.fixture
def two_articles(project, users):
    """Bees: anna marked its adv→int pair complete. Owls: imported gold only."""
    made = {}
    for title in ("Bees", "Owls"):
        article = factories.make_article(project, title, {"adv": [["One.", "Two."]], "int": [["One.", "Two."]]})
        c, s = article.documents.order_by("rank")
        made[title] = (article, c, s)
    article, c, s = made["Bees"]
    ArticleCompletion.objects.create(article=article, complex_document=c, simple_document=s, annotator=users["anna"])
    article, c, s = made["Owls"]
    pair = factories.make_pair(article=article, complex_document=c, simple_document=s, complex_key=indices_key([0]),
                               simple_key=indices_key([0]), origin="imported")
    Adjudication.objects.create(pair=pair, value="aligned", provenance=Adjudication.IMPORTED)
    return made


def test_training_and_metrics_share_one_definition_of_exhaustive_articles(project, two_articles):
    assert dataset.exhaustive_pairs is exhaustive.exhaustive_pairs  # training uses the review area's function
    found = {p.article_id: p for p in exhaustive.exhaustive_pairs(project)}
    bees, owls = two_articles["Bees"][0], two_articles["Owls"][0]
    assert found[bees.pk].annotators and not found[bees.pk].imported
    assert found[owls.pk].imported
    assert exhaustive.exhaustive_articles(project) == {bees.pk, owls.pk}
    assert metrics.complete_articles(project) == {"complete": 2, "suggested": 6, "enough": False}


def test_metrics_name_the_test_and_dev_articles(project, two_articles):
    bees = two_articles["Bees"][0]
    assert metrics.articles([f"{bees.pk}:1-2", f"{bees.pk}:2-3"]) == [{"id": bees.pk, "title": "Bees"}]
    dev = metrics.dev_articles({"data": {"heldout": {"ids": [f"{bees.pk}:1-2"]}}})
    assert dev == {"n_article_pairs": 1, "n_articles": 1, "articles": [{"id": bees.pk, "title": "Bees"}]}
    assert metrics.measure([], "/nowhere", None, None)["n_articles"] == 0


def test_too_few_test_articles_are_flagged_and_a_better_version_has_no_warning(project):
    good = version(project, "good", this=(0.9, 0.8))
    assert metrics.assess(good, None)["warnings"] == [] and not metrics.assess(good, None)["needs_confirmation"]
    few = version(project, "few", this=(0.9, 0.8), n=3)
    a = metrics.assess(few, None)
    assert a["too_few"] and a["warnings"] == ["measured on 3 test articles: too few to trust (fewer than 5)"]
    assert not a["needs_confirmation"]
    none = ModelVersion.objects.create(project=project, name="none", kind="crf", path="/nowhere", metrics={})
    assert "quality is unknown" in metrics.assess(none, None)["warnings"][0]


def test_worse_than_the_untrained_crf_or_the_default_is_warned(project, settings):
    settings.MODEL_MIN_TEST_ARTICLES = 2
    default = version(project, "crf-default", this=(0.95, 0.80))
    same_articles = version(project, "crf-new", this=(0.96, 0.75))
    a = metrics.assess(same_articles, default)
    assert a["default"] == {"id": default.pk, "name": "crf-default", "basis": "same test articles",
                            "task1": {"f1": 0.95}, "task2": {"f1": 0.8}}
    assert a["worse_than_default"] == ["task2"] and a["needs_confirmation"]
    assert a["warnings"] == ["worse than the current default crf-default on Task 2"]
    below = version(project, "below", this=(0.69, 0.9), pairs=["9:1-2"], n=2)
    b = metrics.assess(below, default)
    assert b["worse_than_untrained"] == ["task1"] and b["worse_than_default"] == []
    assert b["default"]["basis"] == "measured on other test articles: not comparable"
    # measured against the default during training: those scores are used
    measured = version(project, "measured", this=(0.9, 0.9), pairs=["9:1-2"], n=2,
                       default=scores(0.93, 0.7), default_version=default.pk)
    assert metrics.assess(measured, default)["worse_than_default"] == ["task1"]


def test_promoting_a_worse_version_needs_a_confirmation_and_is_audited(api, users, project):
    default = version(project, "crf-default", this=(0.95, 0.80))
    make_default(project, default)
    worse = version(project, "crf-worse", this=(0.93, 0.81))
    rita = api(users["rita"])
    url = f"/api/model-versions/{worse.pk}/promote/"
    refused = rita.post(url, {}, format="json")
    assert refused.status_code == 409
    body = refused.json()
    assert body["needs_confirmation"] and body["warnings"] == ["worse than the current default crf-default on Task 1"]
    project.refresh_from_db()
    assert run_options.default_version(project) == default and not AuditEvent.objects.filter(action="model.promote")
    listed = rita.get(f"/api/projects/{project.pk}/model-versions/").json()
    assert {v["name"]: v["assessment"]["needs_confirmation"] for v in listed} == {"crf-default": False, "crf-worse": True}

    assert rita.post(url, {"confirm": True}, format="json").json()["default"] is True
    project.refresh_from_db()
    assert run_options.default_version(project) == worse
    event = AuditEvent.objects.get(action="model.promote")
    assert event.details["confirmed"] is True and event.details["previous_default"] == default.pk
    assert event.details["test_f1"] == {"this": {"task1": 0.93, "task2": 0.81}, "untrained": {"task1": 0.7, "task2": 0.55},
                                        "default": {"task1": 0.95, "task2": 0.8}}
    assert event.details["warnings"] == ["worse than the current default crf-default on Task 1"]
    # the service refuses the same way
    with pytest.raises(training.PromotionNeedsConfirmation):
        training.promote(default)


def test_promoting_a_better_version_needs_no_confirmation(api, users, project):
    default = version(project, "crf-default", this=(0.95, 0.80))
    make_default(project, default)
    better = version(project, "crf-better", this=(0.96, 0.85))
    assert api(users["rita"]).post(f"/api/model-versions/{better.pk}/promote/").status_code == 200
    assert AuditEvent.objects.get(action="model.promote").details["confirmed"] is False
    assert training.promote(better)["warnings"] == []  # already the default: nothing recorded
    assert AuditEvent.objects.filter(action="model.promote").count() == 1


def test_the_models_page_says_how_many_complete_articles_there_are(client, users, project, two_articles):
    client.force_login(users["rita"])
    page = client.get(f"/projects/{project.pk}/models/").content.decode()
    assert 'id="complete-articles">2 / 6<' in page
    assert "The learning curve suggests about 6" in page
