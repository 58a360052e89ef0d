"""Real headless Chromium: the document workflow. A researcher curates two annotators' alignments of an
article (an agreeing and a disagreeing link on screen, one decided with a key, the gold shown after a
reload); an annotator sees their articles as to do / in progress / complete and filters them.
Screenshot: curation.png."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, Membership
from annotation.services.editing import article_alignment as aa
from annotation.services.editing import completion as ac
from tests import factories
from tests.browser.conftest import login, screenshot

pytestmark = pytest.mark.browser

COMPLEX = [["C0 the river flooded the town.", "C1 residents left their homes."], ["C2 rain fell for days."]]
SIMPLE = [["S0 the river flooded the town.", "S1 people left."], ["S2 it rained."]]


@pytest.fixture
def workflow_project(transactional_db):
    """anna and bea align "Flood": both link C0→S0 aligned; C1→S1 anna aligned, bea partial; bea also
    links C2→S2 and marks the pair complete. "Quiet" nobody touched; anna completed "Done"."""
    for name in ("rita", "anna", "bea"):
        factories.make_user(name)
    project = factories.make_project("Workflow", rita="researcher", anna="annotator", bea="annotator")
    project.config = {"qc": {"min_seconds": 0, "test_every": 0}}
    project.save()
    anna, bea = (Membership.objects.get(project=project, user__username=n).user for n in ("anna", "bea"))
    flood = factories.make_article(project, "Flood", {"adv": COMPLEX, "int": SIMPLE})
    docs = aa.resolve_documents(flood, None, None)
    aa.save_links(anna, flood, *docs, None, [{"complex": 0, "simple": 0}, {"complex": 1, "simple": 1}])
    aa.save_links(bea, flood, *docs, None, [{"complex": 0, "simple": 0}, {"complex": 1, "simple": 1, "label": "partial"},
                                            {"complex": 2, "simple": 2}])
    ac.mark_complete(bea, flood, *docs)
    factories.make_article(project, "Quiet", {"adv": [["Q0."]], "int": [["q0."]]})
    done = factories.make_article(project, "Done", {"adv": [["D0."]], "int": [["d0."]]})
    ac.mark_complete(anna, done, *aa.resolve_documents(done, None, None), allow_empty=True)
    return project, flood


def test_a_researcher_curates_two_annotators_alignments_link_by_link(page, workflow_project):
    project, flood = workflow_project
    login(page, "rita", "pw-rita")
    page.goto(f"/articles/{flood.pk}/")
    page.click("#open-curate")
    page.wait_for_selector("#rows tr[data-key]")
    # the first two annotators are compared; links drawn by category
    assert page.locator("#choose-a").input_value() == "anna" and page.locator("#choose-b").input_value() == "bea"
    assert page.locator('#rows tr[data-key="0:0"]').get_attribute("data-category") == "agree"
    assert page.locator('#rows tr[data-key="1:1"]').get_attribute("data-category") == "disagree"
    assert page.locator('#rows tr[data-key="2:2"]').get_attribute("data-category") == "only_b"  # anna said nothing
    assert page.locator("svg#links path.link.agree").count() == 1
    assert page.locator("svg#links path.link.disagree").count() == 1
    assert "1 agree · 1 disagree · 0 only A · 1 only B" in page.locator("#counts").inner_text()

    # choose the disagreeing link with the keyboard and accept B's (partial)
    page.keyboard.press("j")
    assert "current" in page.locator('#rows tr[data-key="1:1"]').get_attribute("class")
    page.keyboard.press("2")
    page.wait_for_selector("#status[data-saved='1']")
    assert "1 link decided" in page.locator("#status").inner_text()
    screenshot(page, "curation", full_page=False)
    gold = Adjudication.objects.get()
    assert (gold.pair.complex_key, gold.pair.simple_key, gold.value, gold.provenance) == ("1", "1", "partial", "adjudicated")

    page.reload()
    page.wait_for_selector('#rows tr[data-key="1:1"]')
    assert page.locator('#rows tr[data-key="1:1"]').get_attribute("data-gold") == "partial"
    assert page.locator('#rows tr[data-key="1:1"] td.gold').inner_text() == "partial"
    assert "1 of 3 decided" in page.locator("#counts").inner_text()


def test_an_annotator_sees_their_articles_to_do_in_progress_and_complete(page, workflow_project):
    project, _ = workflow_project
    login(page, "anna", "pw-anna")
    page.goto(f"/projects/{project.pk}/")
    rows = {page.locator("#articles tbody tr").nth(i).locator("td a").first.inner_text():
            page.locator("#articles tbody tr").nth(i).get_attribute("data-state") for i in range(3)}
    assert rows == {"Done": "complete", "Flood": "in_progress", "Quiet": "todo"}
    assert page.locator('#work-states a[data-state="in_progress"] .count').inner_text() == "1"
    page.click('#work-states a[data-state="todo"]')
    page.wait_for_url("**state=todo")
    assert page.locator("#articles tbody tr").count() == 1
    assert page.locator("#articles tbody tr td a").first.inner_text() == "Quiet"
    assert page.locator('#work-states a[aria-current="page"]').get_attribute("data-state") == "todo"
