"""A researcher opens a run's page from the runs table, filters its pairs, compares it with another
run, cancels a running run, and has a bad parameter refused before anything is queued."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, CandidatePair
from annotation.services.alignment import run_saving
from annotation.services.corpus.demo import ensure_demo
from tests import factories
from tests.browser.conftest import login, screenshot

pytestmark = pytest.mark.browser


def make_runs(project):
    article = factories.make_article(project, "Honey bees", {
        "adv": [["Bees make honey.", "They live in hives.", "Queens lay eggs."]],
        "ele": [["Bees make honey.", "Hives are homes.", "The queen lays eggs."]]})
    c, s = article.documents.order_by("rank")

    def pair(run, ck, sk, score, label):
        return factories.make_pair(run, article=article, complex_document=c, simple_document=s, complex_key=ck,
                                   simple_key=sk, score=score, predicted_label=label)

    old = AlignmentRun.objects.create(project=project, method="jaccard", status="succeeded", pair_count=3)
    pair(old, "0", "0", 0.8, "aligned")
    pair(old, "1", "1", 0.6, "aligned")
    pair(old, "1", "0", 0.3, "partial")
    new = AlignmentRun.objects.create(project=project, method="tfidf", status="succeeded", pair_count=3)
    pair(new, "0", "0", 0.95, "aligned")  # unchanged
    pair(new, "1", "1", 0.5, "partial")  # label changed
    pair(new, "2", "1,2", 0.45, "partial")  # added; 1 → 0 is removed
    run_saving.link_sentences(CandidatePair.objects.filter(article=article))
    return old, new


def test_a_researcher_reads_filters_compares_and_cancels_runs(page, transactional_db):
    project, _ = ensure_demo()
    old, new = make_runs(project)
    login(page, "researcher", "researcher")
    page.goto(f"/projects/{project.pk}/")
    page.click(f"#runs tr[data-run='{new.pk}'] a.run-link")
    page.wait_for_url(f"**/projects/{project.pk}/runs/{new.pk}/")
    assert page.locator("#run-method").inner_text() == "tfidf"
    rows = page.locator("#run-pairs-table tbody tr")
    rows.first.wait_for()
    assert rows.count() == 3
    assert [rows.nth(i).locator("td").nth(5).inner_text() for i in range(3)] == ["0.950", "0.500", "0.450"]
    assert rows.first.locator("td").nth(1).inner_text() == "Honey bees"
    screenshot(page, "run-page")

    page.select_option("#pair-filters select[name=shape]", "n:m")
    page.click("#pair-filters button[type=submit]")
    page.wait_for_function("() => document.querySelectorAll('#run-pairs-table tbody tr').length === 1")
    assert "queen" in rows.first.inner_text()
    page.select_option("#pair-filters select[name=shape]", "")
    page.fill("#pair-filters input[name=q]", "honey")
    page.click("#pair-filters button[type=submit]")
    page.wait_for_function("() => document.querySelector('#run-pairs-table tbody tr td:nth-child(4)')?.textContent"
                           ".includes('honey') && document.querySelectorAll('#run-pairs-table tbody tr').length === 1")
    page.select_option("#pair-filters select[name=labelled]", "1")
    page.click("#pair-filters button[type=submit]")
    page.wait_for_function("() => document.querySelector('#pair-count').textContent.startsWith('0 pair')")
    assert rows.count() == 0

    page.click("#compare-with")
    page.wait_for_url(f"**/projects/{project.pk}/runs/compare/**")
    assert page.input_value("#compare-form select[name=new]") == str(new.pk)
    page.select_option("#compare-form select[name=old]", str(old.pk))
    page.click("#compare-form button[type=submit]")
    page.wait_for_function("() => document.querySelectorAll('#changes tbody tr').length === 3")
    counts = dict(zip(page.locator("#counts dt").all_inner_texts(), page.locator("#counts dd").all_inner_texts()))
    assert {k: counts[k] for k in ("Added", "Removed", "Label changed", "Unchanged links")} == {
        "Added": "1", "Removed": "1", "Label changed": "1", "Unchanged links": "1"}
    changed = [row.locator("td").all_inner_texts()[1:] for row in page.locator("#changes tbody tr").all()]
    assert sorted(changed) == [["Honey bees", "added", "—", "partial"], ["Honey bees", "label changed", "aligned", "partial"],
                               ["Honey bees", "removed", "partial", "—"]]
    assert page.locator("#per-article tbody tr td").all_inner_texts() == ["Honey bees", "1", "1", "1"]
    assert "over every sentence pair" in page.inner_text("#kappa-note")  # issue 27 item 5: says what κ is over
    screenshot(page, "compare-runs")

    running = AlignmentRun.objects.create(project=project, method="jaccard", status="running", progress=40)
    page.goto(f"/runs/{running.pk}/")
    page.click("#cancel-run")
    page.wait_for_function("() => document.querySelector('#run-status').textContent === 'cancelled'")
    running.refresh_from_db()
    assert running.status == "cancelled"
    assert page.locator("#delete-run").is_visible()


def test_a_bad_parameter_is_refused_before_queueing_with_the_valid_options(page, transactional_db):
    project, _ = ensure_demo()
    before = AlignmentRun.objects.count()
    login(page, "researcher", "researcher")
    page.goto(f"/projects/{project.pk}/")
    page.select_option("#start-run select[name=method]", "jaccard")
    field = page.locator("#method-options input[data-option=partial_threshold]")
    field.wait_for()
    assert field.get_attribute("max") == "1"
    page.fill("#start-run input[name=params]", '{"max_complex": 0}')
    page.click("#start-run button[type=submit]")
    message = page.locator("#run-form-message")
    message.locator(".valid-options li").first.wait_for()
    assert "max_complex: must be >= 1, got 0" in message.inner_text()
    assert "partial_threshold (float in [0, 1], default 0.15)" in message.inner_text()
    assert "Valid options:" in message.inner_text()
    assert page.input_value("#start-run input[name=params]") == '{"max_complex": 0}'  # what was typed stays
    page.locator("#start-run").scroll_into_view_if_needed()
    screenshot(page, "run-form-refused", full_page=False)

    page.fill("#start-run input[name=params]", '{"margin": 0.1')
    page.click("#start-run button[type=submit]")
    page.wait_for_function("() => document.querySelector('#run-form-message').textContent.includes('not valid JSON')")
    assert page.input_value("#start-run input[name=params]") == '{"margin": 0.1'
    assert AlignmentRun.objects.count() == before


def test_the_changed_pairs_of_a_comparison_come_a_page_at_a_time(page, transactional_db, monkeypatch):
    from annotation.services.alignment import run_comparison

    monkeypatch.setattr(run_comparison, "CHANGES_PAGE", 2)  # the live server runs in this process
    project, _ = ensure_demo()
    old, new = make_runs(project)
    login(page, "researcher", "researcher")
    page.goto(f"/projects/{project.pk}/runs/compare/?old={old.pk}&new={new.pk}")
    rows = page.locator("#changes tbody tr")
    page.wait_for_function("() => document.querySelectorAll('#changes tbody tr').length === 2")
    assert page.locator("#changes-shown").inner_text() == "2 of 3 changed pairs shown"
    page.click("#more-changes")
    page.wait_for_function("() => document.querySelectorAll('#changes tbody tr').length === 3")
    assert page.locator("#more-changes").is_hidden() and page.locator("#changes-shown").inner_text() == ""
    assert [rows.nth(i).locator("td").nth(1).inner_text() for i in range(3)] == ["Honey bees"] * 3
