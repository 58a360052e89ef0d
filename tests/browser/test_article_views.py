"""Real headless Chromium: a researcher corrects a paragraph link; in the whole-article view an
annotator links sentences with the keyboard, a save of one new link writes exactly one label, linking
into a link says it merges, a document pair is marked complete and reopened, and a researcher's
removal of one model link is the only "not aligned" written. Screenshots: paragraphs.png,
article-align.png, article-complete.png."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotation.models import (
    AlignmentRun,
    ArticleCompletion,
    CandidatePair,
    Label,
    LabelChange,
    ParagraphAlignment,
    Status,
)
from annotation.services.alignment import paragraph_alignment as pa
from annotation.services.corpus.demo import ensure_demo
from annotation.services.editing import article_alignment as aa
from annotation.services.editing import completion as ac
from annotation.services.editing import paragraph_correction as pc
from annotation.services.editing.article_alignment import resolve_documents
from tests import factories
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

    rows = {(r.complex_paragraph.index, r.simple_paragraph.index): r for r in pa.stored_links(*docs).select_related(
        "complex_paragraph", "simple_paragraph", "created_by")}
    assert rows[added].source == ParagraphAlignment.MANUAL and rows[added].active and rows[added].created_by.username == "researcher"
    assert rows[removed].source == ParagraphAlignment.AUTO and not rows[removed].active
    active = [key for key, row in rows.items() if row.active]
    sizes = {(d.pk, p.index): p.sentences.count() for d in docs for p in d.paragraphs.all()}
    expected = sum(sizes[(docs[0].pk, c)] * sizes[(docs[1].pk, s)] for c, s in active)
    run = pa.candidate_run(project, create=False)
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
    assert set(CandidatePair.objects.filter(labels__annotator__username="annotator").values_list("origin", flat=True)) == {"manual"}
    page.reload()
    page.wait_for_selector("circle.handle")
    assert page.locator("circle.handle").count() == 2 and "your saved alignment" in page.locator("#status").inner_text()


def _with_predictions(min_seconds: int = 0):
    """The Volcano article with a run predicting C0→S0, C1→S1 and C2→S2 (aligned), shown to annotators."""
    project, article, docs = _volcano()
    project.config = {"qc": {"min_seconds": min_seconds, "test_every": 0}, "show_predictions": True}
    project.save()
    run = AlignmentRun.objects.create(project=project, method="jaccard", status=Status.SUCCEEDED)
    for i in range(3):
        factories.make_pair(run, article=article, complex_document=docs[0], simple_document=docs[1], complex_key=str(i),
                            simple_key=str(i), predicted_label="aligned", score=0.9, origin="model")
    return project, article, docs, run


def _focus(page, side: str, index: int) -> None:
    """Move the keyboard focus to ``side`` sentence ``index`` (Tab switches column, j/k move)."""
    if page.locator(f"#{side}-col .asent.focus").count() == 0:
        page.keyboard.press("Tab")
    while int(page.locator(f"#{side}-col .asent.focus").get_attribute("data-index")) != index:
        current = int(page.locator(f"#{side}-col .asent.focus").get_attribute("data-index"))
        page.keyboard.press("j" if current < index else "k")


def test_whole_article_save_of_one_new_link_writes_exactly_one_label(page, transactional_db):
    """The annotator saved C0→S0 before; the model's links exist but are not on screen (their own
    alignment is). One new link, saved with the keyboard, is one label: no "not aligned" for the
    model's pairs, nothing rewritten, and the project's per-item minimum time does not refuse it."""
    project, article, docs, run = _with_predictions(min_seconds=60)
    annotator = get_user_model().objects.get(username="annotator")
    aa.save_links(annotator, article, *docs, run, [{"complex": [0], "simple": [0]}], seconds=20)
    before = set(Label.objects.values_list("pk", "value", "updated_at"))

    login(page, "annotator", "annotator")
    page.goto(f"/articles/{article.pk}/align/")
    page.wait_for_selector("#complex-col .asent.focus")
    assert "your saved alignment" in page.locator("#status").inner_text()
    assert page.locator("circle.handle").count() == 1
    assert "Not marked complete" in page.locator("#completion").inner_text()
    _focus(page, "complex", 3)
    page.keyboard.press("Enter")
    _focus(page, "simple", 3)
    page.keyboard.press("Enter")
    page.keyboard.press("l")
    assert page.locator("circle.handle").count() == 2
    page.keyboard.press("s")
    page.wait_for_selector("#status[data-saved]")
    assert "Saved 2 links: 1 label written." in page.locator("#status").inner_text()

    new = Label.objects.exclude(pk__in=[pk for pk, _, _ in before])
    assert new.count() == 1 and Label.objects.count() == len(before) + 1
    label = new.select_related("pair").get()
    assert (label.pair.complex_key, label.pair.simple_key, label.value, label.source) == ("3", "3", "aligned", "article")
    assert 0 < label.seconds < 60  # recorded, and below the per-item minimum without being refused
    assert set(Label.objects.filter(pk__in=[pk for pk, _, _ in before]).values_list("pk", "value", "updated_at")) == before
    assert not LabelChange.objects.exists()
    assert not Label.objects.filter(pair__predictions__run=run).exclude(pair__complex_key="0").exists()
    # saving again without a change writes nothing
    page.keyboard.press("s")
    page.wait_for_selector('#status[data-saved="2"]')
    assert "nothing changed" in page.locator("#status").inner_text()
    assert Label.objects.count() == len(before) + 1


def test_a_fusion_is_linked_per_link_and_the_pair_is_marked_complete_then_reopened(page, transactional_db):
    project, article, docs, run = _with_predictions()
    annotator = get_user_model().objects.get(username="annotator")
    aa.save_links(annotator, article, *docs, run, [{"complex": [0], "simple": [0]}])

    login(page, "annotator", "annotator")
    page.goto(f"/articles/{article.pk}/align/")
    page.wait_for_selector("circle.handle")
    _focus(page, "complex", 1)
    page.keyboard.press("Enter")
    _focus(page, "simple", 0)
    page.keyboard.press("Enter")
    assert "S0 is in 1 link" in page.locator("#status").inner_text()
    page.keyboard.press("l")  # a fusion, link by link: C1→S0 is a link of its own
    page.keyboard.press("p")
    assert page.locator("circle.handle").count() == 2  # two links, two lines

    page.keyboard.press("c")  # unsaved links are saved first, then the pair is marked complete
    page.wait_for_selector('#completion[data-complete="1"]')
    assert "Complete — marked by annotator" in page.locator("#completion").inner_text()
    screenshot(page, "article-complete")
    completion = ArticleCompletion.objects.get()
    assert (completion.annotator.username, completion.complex_document, completion.simple_document) == ("annotator", *docs)
    assert completion.seconds > 0
    [done] = ac.complete_article_pairs(project)
    assert done.annotator == "annotator" and done.links == [aa.Link(0, 0, "aligned"), aa.Link(1, 0, "partial")]
    assert [(g.kind, g.label) for g in done.groups] == [("fusion", "mixed")]

    page.reload()
    page.wait_for_selector('#completion[data-complete="1"]')
    assert page.locator("#reopen").is_visible() and not page.locator("#complete").is_visible()
    page.keyboard.press("o")
    page.wait_for_selector('#completion[data-complete="0"]')
    assert not ArticleCompletion.objects.exists()
    assert Label.objects.filter(annotator=annotator, pair__complex_key="1", pair__simple_key="0").exists()  # links kept


def test_two_tabs_a_stale_save_gets_the_dialog_and_nothing_is_overwritten(page, transactional_db):
    project, article, docs, run = _with_predictions()
    project.config["show_predictions"] = False  # blind: both tabs start from an empty alignment
    project.save()
    annotator = get_user_model().objects.get(username="annotator")
    login(page, "annotator", "annotator")
    page.goto(f"/articles/{article.pk}/align/")
    page.wait_for_selector("#status:not(:has-text('Loading'))")
    other = page.context.new_page()
    other.goto(f"/articles/{article.pk}/align/")
    other.wait_for_selector("#status:not(:has-text('Loading'))")
    # tab A links C0→S0 as partial and saves
    for p in (page,):
        _focus(p, "complex", 0)
        p.keyboard.press("Enter")
        _focus(p, "simple", 0)
        p.keyboard.press("Enter")
        p.keyboard.press("l")
        p.keyboard.press("p")
        p.keyboard.press("s")
        p.wait_for_selector('#status[data-saved="1"]')
    # tab B (stale) links C1→S1 and saves: 409, the dialog, nothing written
    _focus(other, "complex", 1)
    other.keyboard.press("Enter")
    _focus(other, "simple", 1)
    other.keyboard.press("Enter")
    other.keyboard.press("l")
    other.keyboard.press("s")
    other.wait_for_selector("#conflict:not([hidden])")
    assert "added C0 → S0 (partial)" in other.locator("#conflict-changes").inner_text()
    assert dict(Label.objects.filter(annotator=annotator).values_list("pair__complex_key", "value")) == {"0": "partial"}
    screenshot(other, "article-conflict")
    other.keyboard.press("m")  # merge: theirs plus this tab's new link
    other.wait_for_selector('#status[data-saved="1"]')
    assert dict(Label.objects.filter(annotator=annotator).values_list("pair__complex_key", "value")) == {
        "0": "partial", "1": "aligned"}
    # tab A is stale now: take theirs shows both links, writes nothing
    _focus(page, "complex", 0)
    page.keyboard.press("a")
    page.keyboard.press("s")
    page.wait_for_selector("#conflict:not([hidden])")
    page.keyboard.press("t")
    page.wait_for_selector("#conflict", state="hidden")
    assert page.locator("circle.handle").count() == 2
    assert Label.objects.get(annotator=annotator, pair__complex_key="0").value == "partial"  # no revert to aligned
    # keep mine: relabel again and keep it over the other tab's state
    other.keyboard.press("Escape")
    _focus(page, "complex", 1)
    page.keyboard.press("p")
    page.keyboard.press("s")
    page.wait_for_selector('#status[data-saved="2"]')
    _focus(other, "complex", 0)
    _focus(other, "complex", 1)  # focusing a linked sentence selects its link
    other.keyboard.press("x")
    other.keyboard.press("s")
    other.wait_for_selector("#conflict:not([hidden])")
    other.keyboard.press("k")
    other.wait_for_selector('#status[data-saved="2"]')
    assert dict(Label.objects.filter(annotator=annotator).values_list("pair__complex_key", "value")) == {
        "0": "partial", "1": "not-aligned"}


def test_a_researcher_removes_one_model_link_and_only_that_pair_is_labelled_not_aligned(page, transactional_db):
    project, article, docs, run = _with_predictions()
    login(page, "researcher", "researcher")
    page.goto(f"/articles/{article.pk}/align/?run={run.pk}")
    page.wait_for_selector("circle.handle")
    assert "the model's links" in page.locator("#status").inner_text()
    assert page.locator("circle.handle").count() == 3
    _focus(page, "complex", 1)  # focusing a linked sentence selects its link
    page.keyboard.press("x")
    assert page.locator("circle.handle").count() == 2
    page.keyboard.press("s")
    page.wait_for_selector("#status[data-saved]")
    assert "3 labels written, 1 of them not aligned" in page.locator("#status").inner_text()
    labels = {(lab.pair.complex_key, lab.pair.simple_key): lab.value
              for lab in Label.objects.filter(annotator__username="researcher").select_related("pair")}
    assert labels == {("0", "0"): "aligned", ("1", "1"): "not-aligned", ("2", "2"): "aligned"}
    assert CandidatePair.objects.filter(origin="manual").count() == 0  # the kept links are the predicted pairs


def test_marking_a_pair_without_links_complete_asks_first_naming_the_pairs(page, transactional_db):
    """Issue 27 item 7: c on an empty article made every pair "not aligned" gold without a question."""
    _, article, docs = _volcano()
    pairs = docs[0].sentences.count() * docs[1].sentences.count()
    asked = []

    def answer(dialog, accept: bool) -> None:
        asked.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    login(page, "annotator", "annotator")
    page.goto(f"/articles/{article.pk}/align/")
    page.wait_for_selector("#complex-col .asent.focus")
    page.once("dialog", lambda d: answer(d, False))
    page.keyboard.press("c")
    page.wait_for_function("() => document.querySelector('#status').textContent === 'Not marked complete.'")
    # issue 34: the question is the server's, naming what will be stored
    assert f'"not aligned" on all {pairs} of its sentence pairs' in asked[0] and not ArticleCompletion.objects.exists()
    page.once("dialog", lambda d: answer(d, True))
    page.keyboard.press("c")
    page.wait_for_selector('#completion[data-complete="1"]')
    assert len(asked) == 2 and ArticleCompletion.objects.count() == 1
