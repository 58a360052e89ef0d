"""Nothing overwritten silently, nothing stale, in real Chromium: two tabs labelling the same item,
Back/Forward on the labelling page, and editing a label on "My labels"."""
from __future__ import annotations

import pytest

from annotation.models import Label, LabelChange
from annotation.services.corpus.demo import ensure_demo
from tests import factories, labels
from tests.annotation.services.review.test_queue import build_queue, set_qc
from tests.browser.conftest import login, screenshot
from tests.browser.test_labelling import Labeller

pytestmark = pytest.mark.browser


@pytest.fixture
def work(transactional_db):
    """A project of six 1:1 pairs for the demo's "annotator", no minimum time, no test questions."""
    ensure_demo()  # the demo accounts
    project = factories.make_project("Conflicts", annotator="annotator")
    set_qc(project)
    pairs, _ = build_queue(project, 6)
    return project, pairs


def open_labelling(page, project) -> Labeller:
    page.goto(f"/projects/{project.pk}/annotate/")
    return Labeller(page)


def stored(pair) -> str:
    return Label.objects.get(pair=pair, annotator__username="annotator").value


def test_a_second_tab_asks_before_changing_a_label_and_records_the_change(page, work):
    project, pairs = work
    login(page, "annotator", "annotator")
    tab1 = open_labelling(page, project)
    page2 = page.context.new_page()
    tab2 = open_labelling(page2, project)
    assert tab1.current() == tab2.current() == pairs[0].pk, "both tabs show the open item"

    assert tab1.press("1") == pairs[1].pk  # tab 1: aligned
    assert stored(pairs[0]) == "aligned"

    page2.keyboard.press("3")  # tab 2, still on the same item: not aligned
    dialog = page2.locator("#conflict")
    dialog.wait_for(state="visible")
    text = dialog.inner_text()
    assert "You labelled this item Aligned at" in text
    assert "Change to Not aligned" in text and "Keep it" in text
    assert page2.evaluate("document.activeElement.id") == "conflict-keep", "the dialog has the focus"
    assert tab2.current() == pairs[0].pk, "the item stays on screen while the dialog asks"
    screenshot(page2, "label-conflict")
    page2.keyboard.press("1")  # other keys do nothing while the dialog asks
    assert dialog.is_visible()
    assert stored(pairs[0]) == "aligned", "nothing changes until the annotator chooses"
    assert not LabelChange.objects.exists()

    page2.keyboard.press("c")  # change
    page2.wait_for_function("b => document.querySelector('#item').dataset.pair !== b", arg=str(pairs[0].pk))
    assert dialog.is_hidden()
    assert tab2.current() == pairs[1].pk
    page2.locator("#status", has_text="Changed to Not aligned").wait_for()
    assert stored(pairs[0]) == "not-aligned"
    change = LabelChange.objects.get()
    assert (change.pair_id, change.old_value, change.new_value) == (pairs[0].pk, "aligned", "not-aligned")
    assert change.source == "queue" and change.changed_by.username == "annotator"

    # Both tabs are on pairs[1] now; tab 1 labels it, tab 2 disagrees and keeps the stored label (Esc).
    assert tab1.current() == pairs[1].pk
    assert tab1.press("2") == pairs[2].pk
    page2.keyboard.press("1")
    dialog.wait_for(state="visible")
    assert "Partially aligned" in dialog.inner_text()
    page2.keyboard.press("Escape")
    page2.wait_for_function("b => document.querySelector('#item').dataset.pair !== b", arg=str(pairs[1].pk))
    assert tab2.current() == pairs[2].pk, "keeping moves on to the current item"
    page2.locator("#status", has_text="Kept your earlier label").wait_for()
    assert stored(pairs[1]) == "partial"
    assert LabelChange.objects.count() == 1

    # The buttons work with a click as well.
    assert tab2.press("2") == pairs[3].pk
    page.keyboard.press("3")
    dialog = page.locator("#conflict")
    dialog.wait_for(state="visible")
    page.click("#conflict-keep")
    page.locator("#status", has_text="Kept your earlier label").wait_for()
    assert tab1.current() == pairs[3].pk and stored(pairs[2]) == "partial"
    page2.close()


def test_back_and_forward_show_the_current_item_not_a_stale_one(page, work):
    project, pairs = work
    login(page, "annotator", "annotator")
    page.goto(f"/projects/{project.pk}/")
    page.click("#start-labelling")
    tab = Labeller(page)
    assert tab.current() == pairs[0].pk
    assert tab.press("1") == pairs[1].pk

    other = page.context.new_page()  # meanwhile another tab labels the item this one shows
    other_tab = open_labelling(other, project)
    assert other_tab.current() == pairs[1].pk
    assert other_tab.press("2") == pairs[2].pk
    assert tab.current() == pairs[1].pk, "this tab shows a stale item now"

    page.go_back()
    page.wait_for_url(f"**/projects/{project.pk}/")
    page.go_forward()
    page.wait_for_url(f"**/projects/{project.pk}/annotate/")
    page.wait_for_function("p => document.querySelector('#item')?.dataset.pair === p", arg=str(pairs[2].pk))
    assert tab.current() == pairs[2].pk, "Forward shows the current item"

    # A history step within the page (popstate) reloads the current item too.
    page.evaluate("history.pushState({}, '', '#look')")
    assert other_tab.press("3") == pairs[3].pk
    page.go_back()
    page.wait_for_function("p => document.querySelector('#item').dataset.pair === p", arg=str(pairs[3].pk))

    # So does a page restored from the back-forward cache (Chromium may not keep a no-store page
    # there; the event is what such a restore fires).
    assert other_tab.press("1") == pairs[4].pk
    page.evaluate("window.dispatchEvent(new PageTransitionEvent('pageshow', {persisted: true}))")
    page.wait_for_function("p => document.querySelector('#item').dataset.pair === p", arg=str(pairs[4].pk))

    # The current item is labelled once, from the tab showing it.
    assert tab.press("2") == pairs[5].pk
    assert {lab.pair_id: lab.value for lab in Label.objects.all()} == {
        pairs[0].pk: "aligned", pairs[1].pk: "partial", pairs[2].pk: "not-aligned", pairs[3].pk: "aligned",
        pairs[4].pk: "partial"}
    assert not LabelChange.objects.exists()
    other.close()


def test_my_labels_filters_edits_a_label_and_shows_its_history(page, work):
    project, pairs = work
    from django.contrib.auth import get_user_model

    annotator = get_user_model().objects.get(username="annotator")
    for pair, value in zip(pairs[:3], ["aligned", "partial", "aligned"], strict=True):
        assert labels.next_item(annotator, project) == pair
        labels.submit(annotator, project, pair.pk, value=value, comment="tricky" if value == "partial" else "")

    login(page, "annotator", "annotator")
    page.goto(f"/projects/{project.pk}/annotate/")
    page.click("#my-labels-link")
    page.wait_for_url(f"**/projects/{project.pk}/my-labels/")
    rows = page.locator("#labels tbody tr[data-label]")
    rows.nth(2).wait_for()
    assert page.locator("#count").inner_text() == "3 labels"
    first = page.locator(f"#labels tr[data-label='{Label.objects.get(pair=pairs[0]).pk}']")
    assert "The alpha report number 0" in first.locator("td.complex").inner_text()
    assert "The agency published report 0 about alpha." in first.locator("td.simple").inner_text()
    assert first.locator("td.value").inner_text() == "Aligned"

    page.select_option("#filters [name=value]", "partial")
    page.wait_for_function("() => document.querySelector('#count').textContent === '1 label'")
    assert "tricky" in rows.first.inner_text()
    page.click("#filters [type=reset]")
    page.wait_for_function("() => document.querySelector('#count').textContent === '3 labels'")
    page.fill("#filters [name=q]", "about gamma")
    page.wait_for_function("() => document.querySelector('#count').textContent === '1 label'")
    assert rows.count() == 1 and "report 2" in rows.first.inner_text()
    page.fill("#filters [name=q]", "")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#count').textContent === '3 labels'")

    first.locator("[data-action=edit]").click()
    edit = first.locator("form.edit")
    assert page.evaluate("document.activeElement.tagName") == "SELECT", "the edit starts in the value"
    edit.locator("select").select_option("not-aligned")
    edit.locator("[name=comment]").fill("second look")
    edit.locator("button[type=submit]").click()
    page.locator("#status", has_text="Changed to Not aligned").wait_for()
    assert first.locator("td.value").inner_text().startswith("Not aligned")
    label = Label.objects.get(pair=pairs[0])
    assert (label.value, label.comment) == ("not-aligned", "second look")
    change = LabelChange.objects.get()
    assert (change.old_value, change.new_value, change.source) == ("aligned", "not-aligned", "my-labels")

    first.locator("[data-action=history]").click()
    history = page.locator("#labels tr.history")
    history.wait_for()
    assert "Aligned → Not aligned" in history.inner_text()
    assert "from my-labels by annotator" in history.inner_text()
    screenshot(page, "my-labels")

    # Esc leaves an edit without saving; an unchanged label gets no history.
    first.locator("[data-action=edit]").click()
    first.locator("form.edit select").select_option("aligned")
    page.keyboard.press("Escape")
    assert first.locator("form.edit").count() == 0
    assert Label.objects.get(pair=pairs[0]).value == "not-aligned"
    assert LabelChange.objects.count() == 1


def test_a_likert_label_is_edited_rating_by_rating(page, transactional_db):
    ensure_demo()
    project = factories.make_project("Human evaluation", scheme="likert-human-eval", annotator="annotator")
    set_qc(project)
    [pair], _ = build_queue(project, 1)
    from django.contrib.auth import get_user_model

    annotator = get_user_model().objects.get(username="annotator")
    assert labels.next_item(annotator, project) == pair
    ratings = {"simplicity": "4", "adequacy": "3", "fluency": "5"}
    label, _ = labels.submit(annotator, project, pair.pk, ratings=ratings)

    login(page, "annotator", "annotator")
    page.goto(f"/projects/{project.pk}/my-labels/")
    row = page.locator(f"#labels tr[data-label='{label.pk}']")
    assert row.locator("td.value").inner_text() == "simplicity 4, adequacy 3, fluency 5"
    assert page.locator("#filters [name=value]").count() == 0, "Likert labels have no single value to filter by"
    row.locator("[data-action=edit]").click()
    row.locator("form.edit select[name=adequacy]").select_option("1")
    row.locator("form.edit button[type=submit]").click()
    page.locator("#status", has_text="Changed to simplicity 4, adequacy 1, fluency 5").wait_for()
    assert Label.objects.get(pk=label.pk).ratings == {**ratings, "adequacy": "1"}
    row.locator("[data-action=history]").click()
    assert "adequacy 3, fluency 5 → simplicity 4, adequacy 1" in page.locator("#labels tr.history").inner_text()
