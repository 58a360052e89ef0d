"""Real headless Chromium: a researcher corrects a paragraph link; an annotator links sentences with
the keyboard in the whole-article view. Screenshots: paragraphs.png, article-align.png."""
from __future__ import annotations

import pytest

from annotation.models import CandidatePair, Label, ParagraphAlignment
from annotation.services import paragraph_correction as pc
from annotation.services.article_alignment import resolve_documents
from annotation.services.demo import ensure_demo
from tests.browser.conftest import login, screenshot

pytestmark = pytest.mark.browser


def _volcano():
    project, _ = ensure_demo()
    article = project.articles.get(title__icontains="Volcano")
    return project, article, resolve_documents(article, None, None)


def test_a_researcher_removes_an_automatic_paragraph_link_adds_another_and_candidates_follow(page, transactional_db):
    project, article, docs = _volcano()
    auto = [(link["complex"], link["simple"]) for link in pc.paragraph_state(article, *docs)["links"]]
    n_complex, n_simple = docs[0].paragraphs.count(), docs[1].paragraphs.count()
    removed = auto[-1]
    added = next((c, s) for c in reversed(range(n_complex)) for s in reversed(range(n_simple)) if (c, s) not in auto)

    login(page, "researcher", "researcher")
    page.goto(f"/articles/{article.pk}/")
    page.click("#open-paragraphs")
    page.wait_for_selector("circle.handle[data-key]")
    assert page.locator("circle.handle[data-state=auto]").count() == len(auto)

    # remove with the mouse: a first click selects the line, a second removes it
    line = page.locator(f'circle.handle[data-key="{removed[0]}:{removed[1]}"]')
    line.click()
    line.click()
    assert page.locator(f'circle.handle[data-key="{removed[0]}:{removed[1]}"]').get_attribute("data-state") == "removed"
    # add with the keyboard: move to the complex paragraph, choose it, Tab to the simple column, choose
    for _ in range(added[0]):
        page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    while int(page.locator("#simple-col .pcard.focus").get_attribute("data-paragraph")) != added[1]:
        current = int(page.locator("#simple-col .pcard.focus").get_attribute("data-paragraph"))
        page.keyboard.press("j" if current < added[1] else "k")
    page.keyboard.press("Enter")
    assert page.locator(f'circle.handle[data-key="{added[0]}:{added[1]}"]').get_attribute("data-state") == "manual"
    page.keyboard.press("s")
    page.wait_for_selector("#status[data-saved]")
    assert "Saved: 1 added, 1 removed" in page.locator("#status").inner_text()
    screenshot(page, "paragraphs")

    rows = {(r.complex_paragraph.index, r.simple_paragraph.index): r for r in pc.stored_links(*docs).select_related(
        "complex_paragraph", "simple_paragraph", "created_by")}
    assert rows[added].source == ParagraphAlignment.MANUAL and rows[added].active and rows[added].created_by.username == "researcher"
    assert rows[removed].source == ParagraphAlignment.AUTO and not rows[removed].active
    active = [key for key, row in rows.items() if row.active]
    sizes = {(d.pk, p.index): p.sentences.count() for d in docs for p in d.paragraphs.all()}
    expected = sum(sizes[(docs[0].pk, c)] * sizes[(docs[1].pk, s)] for c, s in active)
    run = pc.candidate_run(project, create=False)
    assert CandidatePair.objects.filter(predictions__run=run, complex_document=docs[0], simple_document=docs[1]).count() == expected > 0


def test_an_annotator_links_sentences_with_the_keyboard_and_saves_them_as_labels(page, transactional_db):
    project, article, docs = _volcano()
    project.config = {"qc": {"min_seconds": 0, "test_every": 0}}
    project.save()

    login(page, "annotator", "annotator")
    page.goto(f"/articles/{article.pk}/align/")
    page.wait_for_selector("#complex-col .asent.focus")
    assert "empty alignment" in page.locator("#status").inner_text()  # blind annotation: no model links shown
    page.keyboard.press("Enter")          # select complex sentence 0
    page.keyboard.press("Tab")            # to the simple column (nearest sentence: 0)
    page.keyboard.press("Enter")          # select simple sentence 0
    page.keyboard.press("l")              # link them
    assert page.locator("circle.handle").count() == 1
    page.click('#complex-col .asent[data-index="1"]')   # and one more with the mouse
    page.click('#simple-col .asent[data-index="1"]')
    page.keyboard.press("p")              # the new link is partial
    assert page.locator("path.link.partial").count() == 1
    page.keyboard.press("s")
    page.wait_for_selector("#status[data-saved]")
    assert "Saved 2 links" in page.locator("#status").inner_text()
    screenshot(page, "article-align")

    labels = {(lab.pair.complex_key, lab.pair.simple_key): lab.value
              for lab in Label.objects.filter(annotator__username="annotator").select_related("pair")}
    assert labels == {("0", "0"): "aligned", ("1", "1"): "partial"}
    assert set(CandidatePair.objects.filter(labels__annotator__username="annotator").values_list("run", "origin")) == {(None, "manual")}
    page.reload()
    page.wait_for_selector("circle.handle")
    assert page.locator("circle.handle").count() == 2 and "your saved alignment" in page.locator("#status").inner_text()
