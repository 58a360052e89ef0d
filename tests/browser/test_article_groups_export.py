"""Real headless Chromium: in the whole-article view an annotator annotates a split (one complex
sentence → two simple ones) and a fusion (two complex → one simple) link by link, each link with its
own label, as ``ANNOTATION_GUIDELINES.md`` asks; the gold export then has each link as its own
row/label (TSV in the released six-column layout, JSONL with its pair) and the groups derived from
the links (the JSONL ``group``: split / fusion). Screenshot: article-split-fusion.png."""
from __future__ import annotations

import pytest

from annotation.models import Label
from annotation.services.corpus.demo import ensure_demo
from annotation.services.editing.article_alignment import resolve_documents
from tests.annotation.services.export.helpers import all_pairs
from tests.annotation.services.export.helpers import run as export
from tests.browser.conftest import login, screenshot

pytestmark = pytest.mark.browser

SPLIT = {(0, 0): "partial", (0, 1): "partial"}   # C0 is rewritten as S0 + S1: each piece partial
FUSION = {(1, 3): "partial", (2, 3): "aligned"}  # S3 takes from C1 and C2, each link its own label


def _link(page, c: int, s: int, key: str) -> None:
    """Click complex ``c`` then simple ``s`` (a click on each side links them), then label with ``key``."""
    page.click(f'#complex-col .asent[data-index="{c}"]')
    page.click(f'#simple-col .asent[data-index="{s}"]')
    page.keyboard.press(key)


def test_a_split_and_a_fusion_annotated_per_link_are_exported_one_row_per_link_with_derived_groups(
        page, transactional_db, settings, tmp_path):
    project, _ = ensure_demo()
    project.config = {"qc": {"min_seconds": 0, "test_every": 0}}
    project.save()
    article = project.articles.get(title__icontains="Volcano")
    complex_doc, simple_doc = resolve_documents(article, None, None)

    login(page, "annotator", "annotator")
    page.goto(f"/articles/{article.pk}/align/")
    page.wait_for_selector("#complex-col .asent.focus")
    for (c, s), label in {**SPLIT, **FUSION}.items():
        _link(page, c, s, label[0])
    assert page.locator("circle.handle").count() == 4  # four links, four lines
    assert page.locator("path.link.partial").count() == 3
    page.keyboard.press("s")
    page.wait_for_selector("#status[data-saved]")
    assert "Saved 4 links" in page.locator("#status").inner_text()
    screenshot(page, "article-split-fusion")

    mine = Label.objects.filter(annotator__username="annotator").select_related("pair")
    assert {(int(lab.pair.complex_key), int(lab.pair.simple_key)): lab.value for lab in mine} == {**SPLIT, **FUSION}
    page.reload()  # the links come back per link, with their labels
    page.wait_for_selector("circle.handle")
    assert page.locator("circle.handle").count() == 4 and page.locator("path.link.partial").count() == 3

    _, root = export(project, settings, tmp_path, derived=False, label_policy="majority-or-single",
                     formats=["tsv", "jsonl"], drop_identical=False)
    title, c_level, s_level = article.title, complex_doc.level, simple_doc.level
    rows = {(tuple(r["complex_ids"]), tuple(r["simple_ids"])): r for r in all_pairs(root)
            if r["article"] == title and (r["complex_level"], r["simple_level"]) == (c_level, s_level)}
    links = {**SPLIT, **FUSION}
    assert {(c[0], s[0]): r["class"] for (c, s), r in rows.items()} == links  # each link its own row and label
    split_ids = {rows[((c,), (s,))]["group"]["id"] for c, s in SPLIT}
    fusion_ids = {rows[((c,), (s,))]["group"]["id"] for c, s in FUSION}
    assert len(split_ids) == len(fusion_ids) == 1 and split_ids != fusion_ids
    assert {(r["group"]["kind"], r["group"]["label"], tuple(r["group"]["complex"]), tuple(r["group"]["simple"]))
            for r in rows.values()} == {("split", "partial", (0,), (0, 1)), ("fusion", "mixed", (1, 2), (3,))}

    wiki = {"aligned": "aligned", "partial": "partialAligned"}
    tsv = [line.split("\t") for split in ("train", "dev", "test") if (root / "wiki-manual" / f"{split}.tsv").exists()
           for line in (root / "wiki-manual" / f"{split}.tsv").read_text().splitlines()]
    ours = [row for row in tsv if row[2].startswith(f"{title}-{c_level}-")]
    assert all(len(row) == 6 for row in tsv)  # the released layout: label, simple id, complex id, texts, GLEU
    assert sorted((int(row[2].rsplit("-", 1)[1]), int(row[1].rsplit("-", 1)[1]), row[0]) for row in ours) == sorted(
        (c, s, wiki[label]) for (c, s), label in links.items())
