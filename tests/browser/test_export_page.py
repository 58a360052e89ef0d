"""A researcher assigns splits, previews the counts and downloads a gold export from the page."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, AlignmentRun, CandidatePair, Export, Split
from annotation.services.alignment import alignment_runs
from annotation.services.corpus.demo import ensure_demo
from tests.browser.conftest import login, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_researcher_previews_and_downloads_a_gold_export(page, embedded_worker):
    project, _ = ensure_demo()
    run = AlignmentRun.objects.create(project=project, method="tfidf", params={"access_attributes": False})
    alignment_runs.execute_run(run.pk)
    gold = list(CandidatePair.objects.filter(predictions__run=run).order_by("id")[:6])
    for pair in gold:
        Adjudication.objects.create(pair=pair, value="aligned", provenance=Adjudication.ADJUDICATED)

    login(page, "researcher", "researcher")
    page.goto(f"/projects/{project.pk}/")
    page.click("#open-export")
    page.wait_for_load_state()  # the page's module script has run: its form handlers are attached
    page.click("#split-form button[type=submit]")
    page.wait_for_function("() => document.querySelector('#status').textContent.length > 0")
    assert "articles assigned" in page.locator("#status").inner_text()
    assert Split.objects.filter(article__project=project).count() == 4

    page.click("#preview")
    page.locator("#preview-card").wait_for(state="visible")
    assert page.locator("#preview-table tbody tr").count() >= 1

    page.click("#export-form button[type=submit]")
    page.locator("#status").filter(has_text="is ready").wait_for(timeout=120000)
    link = page.locator("#exports tbody tr").first.locator("a")
    assert link.get_attribute("href").endswith("/download/")
    export = Export.objects.get(project=project)
    assert export.pair_count == len(gold)
    with page.expect_download() as download:
        link.click()
    assert download.value.suggested_filename.endswith(".zip")
    screenshot(page, "export")
