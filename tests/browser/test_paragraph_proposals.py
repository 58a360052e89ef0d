"""Real headless Chromium: an annotator's paragraph correction goes to a researcher, who sees it as a
diff on the board and accepts it (or rejects another). Screenshot: paragraph-proposals.png."""
from __future__ import annotations

import pytest

from annotation.models import ParagraphAlignment, ParagraphProposal
from annotation.services.alignment import paragraph_alignment as pa
from annotation.services.corpus.demo import ensure_demo
from annotation.services.editing import paragraph_correction as pc
from annotation.services.editing.article_alignment import resolve_documents
from tests.browser.conftest import login, screenshot

pytestmark = pytest.mark.browser


def _volcano():
    project, _ = ensure_demo()
    article = project.articles.get(title__icontains="Volcano")
    return project, article, resolve_documents(article, None, None)


def test_an_annotators_correction_is_sent_for_review_and_a_researcher_accepts_it(page, transactional_db):
    project, article, docs = _volcano()
    auto = [(link["complex"], link["simple"]) for link in pc.paragraph_state(article, *docs)["links"]]
    removed = auto[-1]
    stored_before = ParagraphAlignment.objects.count()

    login(page, "annotator", "annotator")
    page.goto(f"/articles/{article.pk}/paragraphs/")
    page.wait_for_selector("circle.handle[data-key]")
    assert "Send for review" in page.locator("#save").inner_text()
    line = page.locator(f'circle.handle[data-key="{removed[0]}:{removed[1]}"]')
    line.click()
    line.click()
    page.keyboard.press("s")
    page.wait_for_selector("#status[data-saved]")
    assert "Your correction was sent to a researcher for review" in page.locator("#status").inner_text()
    page.locator("#my-proposal").wait_for(state="visible")
    assert "waiting for a researcher's review" in page.locator("#my-proposal").inner_text()
    proposal = ParagraphProposal.objects.get()
    assert proposal.status == ParagraphProposal.PENDING and proposal.proposed_by.username == "annotator"
    assert ParagraphAlignment.objects.count() == stored_before  # nothing applied

    page.context.clear_cookies()
    login(page, "researcher", "researcher")
    page.goto(f"/articles/{article.pk}/paragraphs/?complex={docs[0].pk}&simple={docs[1].pk}")
    item = page.locator(f"#proposal-list li[data-proposal='{proposal.pk}']")
    item.wait_for()
    assert "by annotator" in item.inner_text() and "+0" in item.inner_text() and "−1" in item.inner_text()
    item.locator("button.show").click()
    assert page.locator(f'circle.handle[data-key="{removed[0]}:{removed[1]}"]').get_attribute("data-state") == "removed"
    screenshot(page, "paragraph-proposals")
    item.locator("input.note").fill("agreed")
    item.locator("button.accept").click()
    page.wait_for_selector("#status[data-decided=accept]")
    assert f"Proposal #{proposal.pk} accepted" in page.locator("#status").inner_text()
    page.locator("#no-proposals").wait_for(state="visible")
    proposal.refresh_from_db()
    assert (proposal.status, proposal.decided_by.username, proposal.note) == ("accepted", "researcher", "agreed")
    assert removed not in {(c, s) for c, s in pa.stored_links(*docs).filter(active=True)
                           .values_list("complex_paragraph__index", "simple_paragraph__index")}
    assert page.locator(f'circle.handle[data-key="{removed[0]}:{removed[1]}"]').get_attribute("data-state") == "removed"
