"""A researcher opens the model registry from the project page, reads each version's test F1 beside the
previous and the untrained crf's, sees the chart across versions, and promotes a version."""
from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from annotation.models import ModelVersion, Project
from annotation.services.alignment.run_options import MODEL_KIND
from annotation.services.corpus.demo import ensure_demo
from tests.browser.conftest import login, screenshot

pytestmark = pytest.mark.browser


def scores(t1: float, t2: float) -> dict:
    return {"task1": {"f1": t1}, "task2": {"f1": t2}}


def make_versions(project: Project) -> tuple[ModelVersion, ModelVersion]:
    """Two trained versions as the training service records them (training itself is tested in tests/workers)."""
    untrained = scores(0.702, 0.548)
    now = timezone.now()
    v1 = ModelVersion.objects.create(
        project=project, name="crf-v1", kind=MODEL_KIND, path="/models/crf-v1", created_at=now - datetime.timedelta(days=2),
        training_snapshot={"exhaustive_links": {"train": 41}, "pair_examples": 120},
        metrics={"test": {"n_article_pairs": 2, "this": scores(0.781, 0.612), "untrained": untrained},
                 "dev": {"trained": {"task1_f1": 0.77, "task2_f1": 0.6}, "untrained_crf": {"task1_f1": 0.7, "task2_f1": 0.55}}})
    v2 = ModelVersion.objects.create(
        project=project, name="crf-v2", kind=MODEL_KIND, path="/models/crf-v2", parent=v1, created_at=now,
        training_snapshot={"exhaustive_links": {"train": 88}, "pair_examples": 310},
        metrics={"test": {"n_article_pairs": 2, "this": scores(0.834, 0.691), "previous": scores(0.781, 0.612),
                          "untrained": untrained}})
    return v1, v2


def test_a_researcher_reads_the_model_registry_and_promotes_a_version(page, transactional_db):
    project, _ = ensure_demo()
    v1, v2 = make_versions(project)
    login(page, "researcher", "researcher")
    page.goto(f"/projects/{project.pk}/")
    page.click("#open-models")
    page.wait_for_url(f"**/projects/{project.pk}/models/")

    rows = page.locator("#versions tbody tr[data-version]")
    rows.nth(1).wait_for()
    assert [rows.nth(i).get_attribute("data-version") for i in range(rows.count())] == [str(v2.pk), str(v1.pk)]
    newest = rows.first.locator("td").all_inner_texts()
    assert newest[0] == "crf-v2" and newest[1] == f"#{v1.pk}" and newest[3] == "88 links, 310 pairs"
    assert newest[4:6] == ["0.834 · 0.781 · 0.702", "0.691 · 0.612 · 0.548"]
    assert rows.nth(1).locator("td").nth(6).inner_text() == "0.770 / 0.600 (untrained 0.700 / 0.550)"

    # the vendor scripts (make setup) loaded and Chart.js drew one point per version, oldest first
    page.wait_for_function("() => window.Chart && Chart.getChart(document.querySelector('#metrics-chart'))")
    chart = page.evaluate("() => { const c = Chart.getChart(document.querySelector('#metrics-chart'));"
                          " return {labels: c.data.labels, t2: c.data.datasets[1].data}; }")
    assert chart == {"labels": ["crf-v1", "crf-v2"], "t2": [0.612, 0.691]}
    assert page.locator("#chart-message").is_hidden()
    page.wait_for_function("() => !Chart.animator.running(Chart.getChart(document.querySelector('#metrics-chart')))")
    page.evaluate("() => document.querySelector('#metrics-chart').closest('section').scrollIntoView()")
    screenshot(page, "models", full_page=False)

    rows.nth(1).get_by_role("button", name="Promote").click()
    page.wait_for_function("() => document.querySelector('#version-message').textContent.includes('crf-v1 is now the default')")
    page.wait_for_function(f"() => document.querySelector('#versions tr[data-version=\"{v1.pk}\"] td').textContent"
                           " === 'crf-v1 (default)'")
    assert page.locator(f"#versions tr[data-version='{v2.pk}'] td").first.inner_text() == "crf-v2"
    assert Project.objects.get(pk=project.pk).config["default_model_version"] == v1.pk


def test_a_worse_version_is_warned_and_promoted_only_after_confirming(page, transactional_db):
    """Issue 18 §5 / issue 21 §4: the warning under a version worse than the default, too few test
    articles, and the confirmation step before promoting it."""
    from annotation.models import AuditEvent

    project, _ = ensure_demo()
    test = {"n_article_pairs": 2, "n_articles": 2, "pairs": ["1:1-2", "2:1-2"],
            "articles": [{"id": 1, "title": "Bees"}, {"id": 2, "title": "Owls"}], "untrained": scores(0.702, 0.548)}
    good = ModelVersion.objects.create(project=project, name="crf-good", kind=MODEL_KIND, path="/models/good",
                                       metrics={"test": {**test, "this": scores(0.90, 0.80)}})
    worse = ModelVersion.objects.create(project=project, name="crf-worse", kind=MODEL_KIND, path="/models/worse",
                                        metrics={"test": {**test, "this": scores(0.85, 0.81)}})
    project.config = {**(project.config or {}), "default_model_version": good.pk}
    project.save(update_fields=["config"])
    login(page, "researcher", "researcher")
    page.goto(f"/projects/{project.pk}/models/")
    assert "The learning curve suggests about 6" in page.locator("#complete-advice").inner_text()

    details = page.locator(f"#versions tr[data-assessment='{worse.pk}']")
    details.wait_for()
    info = details.inner_text()
    assert "Test: 2 exhaustively annotated articles (Bees, Owls)" in info
    assert "current default crf-good: Task 1 0.900 · Task 2 0.800 (same test articles)" in info
    warnings = details.locator(".version-warning").all_inner_texts()
    assert warnings == ["⚠ measured on 2 test articles: too few to trust (fewer than 5)",
                        "⚠ worse than the current default crf-good on Task 1"]

    page.locator(f"#versions tr[data-version='{worse.pk}']").get_by_role("button", name="Promote").click()
    confirm = page.locator("#promote-confirm")
    confirm.wait_for()
    assert "Promote crf-worse anyway?" in confirm.inner_text()
    assert Project.objects.get(pk=project.pk).config["default_model_version"] == good.pk
    screenshot(page, "models-promote-confirm", full_page=False)
    confirm.get_by_role("button", name="Promote anyway").click()
    page.wait_for_function("() => document.querySelector('#version-message').textContent.includes('crf-worse is now the default')")
    assert Project.objects.get(pk=project.pk).config["default_model_version"] == worse.pk
    assert AuditEvent.objects.get(action="model.promote", target="crf-worse").details["confirmed"] is True


def test_the_training_form_shows_every_declared_option_and_refuses_a_bad_value_with_its_message(
        page, transactional_db):
    """The form is drawn from the engine's TRAIN_PARAMS (every option, its default and range); only options changed
    from their default are sent, and a value out of range is refused with that option's own message."""
    from django.contrib.auth import get_user_model

    from annotation.models import ArticleCompletion, Split
    from workers.engine import TRAIN_PARAMS

    project, _ = ensure_demo()
    article = project.articles.order_by("pk").first()
    complex_doc, simple_doc = article.documents.order_by("rank")[:2]
    ArticleCompletion.objects.create(article=article, complex_document=complex_doc, simple_document=simple_doc,
                                     annotator=get_user_model().objects.get(username="annotator"))
    Split.objects.update_or_create(article=article, defaults={"name": "train"})
    login(page, "researcher", "researcher")
    page.goto(f"/projects/{project.pk}/models/")

    rows = page.locator("#train-options tr[data-option]")
    assert [rows.nth(i).get_attribute("data-option") for i in range(rows.count())] == [o.name for o in TRAIN_PARAMS]
    for option in TRAIN_PARAMS:
        field = page.locator(f"#train-{option.name}")
        if option.type == "bool":
            assert field.is_checked() is option.default
        elif option.type in ("int", "float"):
            assert float(field.input_value()) == option.default
        else:
            assert field.input_value() == ("" if option.default is None else str(option.default))
    assert page.locator("#train-options tr[data-option=epochs] td").nth(2).text_content().strip() == "≥ 1"

    page.click("#train-options summary")
    page.fill("#train-epochs", "0")
    page.click("#train-form button[type=submit]")
    page.wait_for_function("() => document.querySelector('#train-status').textContent.includes('Training refused')")
    assert "epochs: must be >= 1, got 0" in page.locator("#train-status").inner_text()
    assert not project.jobs.exists()

    sent = []
    page.route("**/train/", lambda route: (sent.append(route.request.post_data_json),
                                            route.fulfill(status=400, json={"detail": "stopped by the test"})))
    page.fill("#train-epochs", "3")
    page.uncheck("#train-freeze_embeddings")
    page.select_option("#train-base_similarity", "sbert")
    page.click("#train-form button[type=submit]")
    page.wait_for_function("() => document.querySelector('#train-status').textContent.includes('stopped by the test')")
    assert sent == [{"config": {"epochs": 3, "freeze_embeddings": False, "base_similarity": "sbert"}, "seed": 0}]
