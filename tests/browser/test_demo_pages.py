"""A researcher logs in to the demo, finds the demo project and its articles, imports a corpus."""
from __future__ import annotations

import pytest

from annotation.services.corpus.demo import DEMO_PROJECT, ensure_demo
from tests.browser.conftest import login, screenshot

pytestmark = pytest.mark.browser


def test_the_demo_lists_its_projects_and_articles(page, transactional_db):
    ensure_demo()
    login(page, "researcher", "researcher")
    assert page.locator("#projects").inner_text().count(DEMO_PROJECT) == 1
    screenshot(page, "projects")
    page.click(f"text={DEMO_PROJECT}")
    articles = page.locator("#articles tbody tr")
    assert articles.count() == 4
    assert "Volcano" in page.locator("#articles").inner_text()
    screenshot(page, "project")
    page.click("#articles >> text=Volcano")
    assert page.locator(".version h2").all_inner_texts() == ["adv", "int", "ele"]


def test_a_bad_upload_on_the_import_page_says_what_is_wrong_and_imports_nothing(page, transactional_db, tmp_path):
    project, _ = ensure_demo()
    before = project.articles.count()
    bad = tmp_path / "Story-adv.txt"
    bad.write_bytes(b"\xff\xfe not utf-8 \x00\x00")
    login(page, "researcher", "researcher")
    page.goto(f"/projects/{project.pk}/import/")
    page.set_input_files("input[name=files]", str(bad))
    page.click("#import-form button[type=submit]")
    problems = page.locator(".problems").inner_text()
    assert "Nothing was imported" in problems and "Story-adv.txt" in problems
    assert project.articles.count() == before


def test_an_annotator_cannot_reach_the_import_page(page, transactional_db):
    project, _ = ensure_demo()
    login(page, "annotator", "annotator")
    response = page.goto(f"/projects/{project.pk}/import/")
    assert response.status == 403
    page.goto(f"/projects/{project.pk}/")
    assert page.locator("#start-run").count() == 0


@pytest.mark.slow
def test_a_researcher_starts_a_run_with_the_button_and_watches_it_finish(page, embedded_worker):
    project, _ = ensure_demo()
    login(page, "researcher", "researcher")
    page.goto(f"/projects/{project.pk}/")
    page.select_option("#start-run select[name=method]", "tfidf")
    page.click("#start-run button[type=submit]")
    assert "queued" in page.locator(".messages").inner_text()
    status = page.locator("#runs tbody tr").first.locator(".status")
    status.filter(has_text="succeeded").wait_for(timeout=120000)
    row = page.locator("#runs tbody tr").first
    assert row.locator(".pct").inner_text() == "100%"
    assert int(row.locator(".pairs").inner_text()) > 0
    screenshot(page, "run-finished")
