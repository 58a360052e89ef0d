"""Issue 18 item 9, small things seen on the way, in real Chromium: shift-click in the whole-article view
leaves no text selection; on the model registry Promote is disabled on the default version, the chart has
a "Task 1 F1 untrained" line, and "Run #N started." links to the run's page."""
from __future__ import annotations

import json

import pytest

from annotation.models import ModelVersion
from annotation.services.alignment.run_options import MODEL_KIND
from annotation.services.corpus.demo import ensure_demo
from annotation.services.editing.article_alignment import resolve_documents
from tests.browser.conftest import login

pytestmark = pytest.mark.browser


def test_shift_click_selects_a_range_of_sentences_without_a_text_selection(page, transactional_db):
    project, _ = ensure_demo()
    project.config = {"qc": {"min_seconds": 0, "test_every": 0}}
    project.save()
    article = project.articles.get(title__icontains="Volcano")
    resolve_documents(article, None, None)
    login(page, "annotator", "annotator")
    page.goto(f"/articles/{article.pk}/align/")
    page.wait_for_selector("#complex-col .asent.focus")
    page.click('#complex-col .asent[data-index="0"]')
    page.click('#complex-col .asent[data-index="2"]', modifiers=["Shift"])
    assert page.evaluate("() => window.getSelection().toString()") == ""


def test_the_registry_disables_promote_on_the_default_and_links_a_started_run(page, transactional_db):
    project, _ = ensure_demo()
    scores = {"task1": {"f1": 0.8}, "task2": {"f1": 0.6}}
    untrained = {"task1": {"f1": 0.7}, "task2": {"f1": 0.5}}
    default = ModelVersion.objects.create(project=project, name="crf-a", kind=MODEL_KIND, path="/models/a",
                                          metrics={"test": {"this": scores, "untrained": untrained}})
    other = ModelVersion.objects.create(project=project, name="crf-b", kind=MODEL_KIND, path="/models/b",
                                        metrics={"test": {"this": scores, "untrained": untrained}})
    project.config = {**(project.config or {}), "default_model_version": default.pk}
    project.save(update_fields=["config"])
    # the re-align answer is stubbed: starting a real run is tested elsewhere
    page.route("**/realign/", lambda route: route.fulfill(status=201, content_type="application/json",
                                                         body=json.dumps({"id": 4242})))
    login(page, "researcher", "researcher")
    page.goto(f"/projects/{project.pk}/models/")
    promote = page.locator(f"#versions tr[data-version='{default.pk}']").get_by_role("button", name="Promote")
    promote.wait_for()
    assert promote.is_disabled() and "already the default" in promote.get_attribute("title").lower()
    assert page.locator(f"#versions tr[data-version='{other.pk}']").get_by_role("button", name="Promote").is_enabled()

    page.wait_for_function("() => window.Chart && Chart.getChart(document.querySelector('#metrics-chart'))")
    labels = page.evaluate("() => Chart.getChart(document.querySelector('#metrics-chart')).data.datasets.map(d => d.label)")
    assert "Task 1 F1 untrained" in labels and "Task 2 F1 untrained" in labels

    page.locator(f"#versions tr[data-version='{other.pk}']").get_by_role("button", name="Re-align all").click()
    link = page.locator("#version-message a")
    link.wait_for()
    assert link.inner_text() == "Run #4242" and link.get_attribute("href") == "/runs/4242/"
    assert page.locator("#version-message").inner_text() == "Run #4242 started."
