"""A researcher opens the model registry from the project page, reads each version's test F1 beside the
previous and the untrained crf's, sees the chart across versions, and promotes a version."""
from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from annotation.models import ModelVersion, Project
from annotation.services.corpus.demo import ensure_demo
from annotation.services.training.dataset import MODEL_KIND
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
