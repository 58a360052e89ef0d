"""The ``hf`` export re-imports to the same documents, paragraphs and gold (issue 28 §4): its
``hf/articles`` rows (wiki_auto's ``auto`` layout) hold the whole documents; both load with ``datasets``."""
from __future__ import annotations

import json

import pytest

from annotation.models import Adjudication, Article, Document, Sentence, Split
from annotation.services.corpus.importing import import_files, import_path
from annotation.services.review.exhaustive import exhaustive_pairs
from tests import factories

from .helpers import run

pytestmark = pytest.mark.django_db
RECORDS = [
    {"id": "Bees", "complete": True,
     "complex": {"level": "adv", "paragraphs": [["Bees are remarkably industrious insects.", "They visit many flowers."],
                                                ["Honey is what they make from nectar."], ["Nobody links this sentence."]]},
     "simple": {"level": "ele", "paragraphs": [["Bees work hard.", "They visit flowers."], ["They make honey."],
                                               ["An unlinked simple one."]]},
     "pairs": [{"complex": [0], "simple": [0], "label": "aligned"}, {"complex": [1], "simple": [1], "label": "partial"},
               {"complex": [2], "simple": [2], "label": "aligned"}]},
    {"id": "Owls", "complete": False,
     "complex": {"level": "adv", "paragraphs": [["Owls hunt at night and sleep by day."], ["They eat mice and voles."]]},
     "simple": {"level": "ele", "paragraphs": [["Owls hunt at night.", "They sleep by day."], ["They eat mice."]]},
     "pairs": [{"complex": [0], "simple": [0, 1], "label": "aligned"}, {"complex": [1], "simple": [2], "label": "not"}]},
]


def state(project) -> dict:
    """Documents (paragraphs of sentences), gold, complete articles and splits of a project."""
    docs: dict[tuple[str, str], list[list[str]]] = {}
    for s in (Sentence.objects.filter(document__article__project=project).select_related("document__article", "paragraph")
              .order_by("document__article__title", "document__rank", "index")):
        paragraphs = docs.setdefault((s.document.article.title, s.document.level), [])
        while len(paragraphs) <= s.paragraph.index:
            paragraphs.append([])
        paragraphs[s.paragraph.index].append(s.text)
    titles = dict(Article.objects.filter(project=project).values_list("pk", "title"))
    return {"documents": docs,
            "gold": set(Adjudication.objects.filter(pair__article__project=project).values_list(
                "pair__article__title", "pair__complex_document__level", "pair__simple_document__level",
                "pair__complex_key", "pair__simple_key", "value")),
            "complete": {titles[p.article_id] for p in exhaustive_pairs(project)},
            "splits": dict(Split.objects.filter(article__project=project).values_list("article__title", "name"))}


def test_the_hf_export_reimports_to_the_same_documents_paragraphs_and_gold(project, settings, tmp_path):
    from datasets import load_from_disk

    settings.IMPORT_DIR = tmp_path / "imports"
    import_files(project, [("set.jsonl", "".join(json.dumps(r) + "\n" for r in RECORDS).encode())])
    _, root = run(project, settings, tmp_path / "out", formats=["hf"])
    rows = load_from_disk(str(root / "hf" / "articles"))
    assert sum(len(rows[s]) for s in rows) == 2 and sum(len(d) for d in load_from_disk(str(root / "hf")).values()) == 5
    back = factories.make_project("Back")
    result = import_path(back, root / "hf", "auto")
    assert result.format == "hf" and any("article rows" in w for w in result.warnings)
    before, after = state(project), state(back)
    assert after["documents"][("Bees", "adv")][2] == ["Nobody links this sentence."]  # a sentence in no pair
    assert after == before
    assert before["complete"] == {"Bees"} and len(before["gold"]) == 5
    assert {d.level: d.rank for d in Document.objects.filter(article__project=back, article__title="Owls")} == {
        "adv": 0, "ele": 1}
