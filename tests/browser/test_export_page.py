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


def test_the_export_preview_explains_and_counts_each_gold_policy(page):
    """issue 18: the default policy keeps the annotators' votes; the page explains each policy and the preview
    shows, per policy, how many pairs come from imports, adjudication, majority and single votes."""
    from django.contrib.auth import get_user_model

    from annotation.models import Label

    project, _ = ensure_demo()
    run = AlignmentRun.objects.create(project=project, method="tfidf", params={"access_attributes": False})
    alignment_runs.execute_run(run.pk)
    pairs = list(CandidatePair.objects.filter(predictions__run=run).order_by("id")[:6])
    Adjudication.objects.create(pair=pairs[0], value="aligned", provenance=Adjudication.IMPORTED)
    Adjudication.objects.create(pair=pairs[1], value="aligned", provenance=Adjudication.ADJUDICATED)
    one, two = (get_user_model().objects.get(username=n) for n in ("annotator", "annotator2"))
    for pair in pairs[2:4]:  # two agreeing votes: a majority
        for user in (one, two):
            Label.objects.create(pair=pair, annotator=user, value="partial", seconds=5.0)
    Label.objects.create(pair=pairs[4], annotator=one, value="aligned", seconds=5.0)  # a single vote

    login(page, "researcher", "researcher")
    page.goto(f"/projects/{project.pk}/export/")
    page.wait_for_load_state()
    assert page.locator("select[name=label_policy]").input_value() == "majority-or-single"
    help_text = page.locator("#policy-help").inner_text()
    for policy in ("majority-or-single", "majority", "stored"):
        assert policy in help_text
    page.uncheck("[name=drop_identical]")
    page.uncheck("[name=derived]")
    page.click("#preview")
    page.locator("#policy-preview").wait_for(state="visible")

    def row(policy):
        return page.locator(f"#policy-table tr[data-policy='{policy}'] td").all_inner_texts()

    assert row("majority-or-single")[1:6] == ["5", "1", "1", "2", "1"]
    assert row("majority")[1:6] == ["4", "1", "1", "2", "0"]
    assert row("stored")[1:6] == ["2", "1", "1", "0", "0"]
    assert "(chosen)" in row("majority-or-single")[0]
    assert "5 pairs would be exported" in page.locator("#status").inner_text()
    page.select_option("select[name=label_policy]", "stored")
    page.click("#preview")
    page.locator("#status").filter(has_text="2 pairs would be exported").wait_for()
    assert "(chosen)" in row("stored")[0]
    screenshot(page, "export-policies")
