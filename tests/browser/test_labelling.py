"""An annotator labels the demo project's pairs in real Chromium, with the keyboard only."""
from __future__ import annotations

import json

import pytest

from annotation.models import AlignmentRun, Assignment, CandidatePair, Label
from annotation.services.alignment import alignment_runs
from annotation.services.corpus.demo import ensure_demo
from tests.browser.conftest import login, screenshot

pytestmark = pytest.mark.browser


@pytest.fixture
def demo_queue(transactional_db):
    """The demo project with a tf-idf run's pairs queued, no waiting and no test questions."""
    project, _ = ensure_demo()
    project.config = {"qc": {"min_seconds": 0, "test_every": 0}}
    project.save()
    run = AlignmentRun.objects.create(project=project, method="tfidf")
    alignment_runs.execute_run(run.pk)
    assert CandidatePair.objects.filter(predictions__run=run).count() >= 12
    return project


class Labeller:
    def __init__(self, page):
        self.page = page
        self.item = page.locator("#item")

    def current(self) -> int:
        self.item.wait_for(state="visible")
        return int(self.item.get_attribute("data-pair"))

    def press(self, key: str) -> int:
        """Press a key that moves to another item; returns the new item's pair id."""
        before = self.current()
        self.page.keyboard.press(key)
        self.page.wait_for_function("b => document.querySelector('#item').dataset.pair !== b", arg=str(before))
        return self.current()


def test_an_annotator_labels_ten_pairs_with_the_keyboard_only(page, demo_queue):
    project = demo_queue
    login(page, "annotator", "annotator")
    page.goto(f"/projects/{project.pk}/")
    page.focus("#start-labelling")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/projects/{project.pk}/annotate/")
    labeller = Labeller(page)
    legend = page.locator("#legend").inner_text()
    for shortcut in ("Aligned", "Not aligned", "undo", "skip", "comment", "help"):
        assert shortcut in legend

    expected: dict[int, str] = {}
    highlighted = 0

    def label(key: str, value: str) -> None:
        nonlocal highlighted
        highlighted += page.locator("#complex del.del, #simple ins.ins").count()
        expected[labeller.current()] = value
        labeller.press(key)

    label("1", "aligned")

    page.keyboard.press("?")
    assert page.locator("#help").is_visible()
    page.keyboard.press("Escape")
    assert page.locator("#help").is_hidden()

    page.keyboard.press("x")  # context on: the pair's paragraph around it
    page.locator("#complex .sent.context, #simple .sent.context").first.wait_for()
    page.keyboard.press("x")
    page.locator("#complex .sent.context").first.wait_for(state="detached")

    commented = labeller.current()
    page.keyboard.press("c")
    page.keyboard.type("merged clause")
    page.keyboard.press("Escape")
    label("2", "partial")
    third = labeller.current()
    label("3", "not-aligned")

    assert labeller.press("u") == third, "undo brings the last item back"
    label("1", "aligned")  # changes our mind about it

    skipped = labeller.current()
    after_skip = labeller.press("s")
    assert after_skip != skipped

    while len(expected) < 10:
        if len(expected) == 8:
            screenshot(page, "labelling")
        label("2" if len(expected) % 2 else "1", "partial" if len(expected) % 2 else "aligned")

    assert highlighted > 0, "word differences are highlighted"
    labels = {lab.pair_id: lab.value for lab in Label.objects.filter(annotator__username="annotator")}
    assert labels == expected
    assert len(labels) == 10
    assert Label.objects.get(annotator__username="annotator", pair_id=commented).comment == "merged clause"
    assert Assignment.objects.get(annotator__username="annotator", pair_id=skipped).status == Assignment.SKIPPED
    assert skipped not in labels
    progress = page.locator("#progress").inner_text()
    assert progress.startswith("10 done")


def test_a_label_whose_answer_is_lost_is_kept_in_the_browser_and_stored_once(page, demo_queue):
    project = demo_queue
    login(page, "annotator", "annotator")
    page.goto(f"/projects/{project.pk}/annotate/")
    labeller = Labeller(page)
    first = labeller.current()
    calls = []

    def reach_server_then_drop(route):
        calls.append(route.request.url)
        if len(calls) == 1:
            route.fetch()  # the server stores the label...
        route.abort()      # ...but the browser never hears back (and stays offline)

    page.route("**/queue/submit/**", reach_server_then_drop)
    page.keyboard.press("1")
    # the label's round trip reaches the server first (route.fetch): on a loaded CI machine that can take
    # longer than the page's default 15 s
    page.locator("#status", has_text="Connection lost").wait_for(timeout=45_000)
    pending = json.loads(page.evaluate(f"localStorage.getItem('alignapp.pending.{project.pk}')"))
    assert pending["pair"] == first and pending["value"] == "aligned"
    assert Label.objects.filter(pair_id=first).count() == 1

    page.unroute("**/queue/submit/**")
    page.reload()
    assert labeller.current() != first
    page.locator("#status", has_text="Saved").wait_for()
    assert page.evaluate(f"localStorage.getItem('alignapp.pending.{project.pk}')") is None
    assert Label.objects.filter(pair_id=first).count() == 1
    assert str(Label.objects.get(pair_id=first).client_token) == pending["client_token"]


def test_the_labelling_view_fits_a_laptop_screen(page, demo_queue):
    page.set_viewport_size({"width": 1366, "height": 768})
    login(page, "annotator", "annotator")
    page.goto(f"/projects/{demo_queue.pk}/annotate/")
    Labeller(page).current()
    for selector in ("#complex", "#simple", "#answer", "#submit", "#legend"):
        box = page.locator(selector).bounding_box()
        assert box is not None and box["y"] + box["height"] <= 768, f"{selector} is below the fold"
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366


def test_a_likert_project_is_rated_row_by_row_with_number_keys(page, transactional_db):
    from annotation.services.corpus.demo import ensure_demo as _ensure_accounts
    from tests import factories
    from tests.annotation.services.review.test_queue import build_queue, set_qc

    _ensure_accounts()
    project = factories.make_project("Human evaluation", scheme="likert-human-eval", annotator="annotator")
    set_qc(project)
    work, _ = build_queue(project, 2)
    login(page, "annotator", "annotator")
    page.goto(f"/projects/{project.pk}/annotate/")
    labeller = Labeller(page)
    assert labeller.current() == work[0].pk
    page.keyboard.press("4")          # simplicity, then the cursor moves to adequacy
    page.keyboard.press("ArrowUp")    # back to simplicity to correct it
    page.keyboard.press("5")
    page.keyboard.press("3")          # adequacy
    page.keyboard.press("Tab")        # fluency is current already; Tab wraps to simplicity...
    page.keyboard.press("Shift+Tab")  # ...and back
    page.keyboard.press("2")          # fluency
    assert page.locator(".likert-row.current").get_attribute("data-dimension") == "fluency"
    screenshot(page, "labelling-likert")
    assert labeller.press("Enter") == work[1].pk
    assert Label.objects.get(pair=work[0]).ratings == {"simplicity": "5", "adequacy": "3", "fluency": "2"}
