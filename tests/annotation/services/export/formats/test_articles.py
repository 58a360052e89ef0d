"""``articles`` (``export/formats/articles.py``): the engine/importer format, one line per article document pair
with both documents, the 1:1 gold links and every n:m pair."""
from __future__ import annotations

import json

import pytest

from annotation.services.export.formats.articles import ArticlesWriter
from tests.annotation.services.export.formats.helpers import COMPLEX, batch, record

pytestmark = pytest.mark.django_db


def lines(root) -> list[dict]:
    return [json.loads(line) for line in (root / "articles" / "train.jsonl").read_text().splitlines()]


def test_a_line_holds_both_documents_the_links_and_every_pair(tmp_path):
    writer = ArticlesWriter(tmp_path, ["train"], complete={(1, 2)})
    records = [record([0], [0, 1], "partial", score=0.5), record([1], [2], "aligned"), record([0], [2], "not")]
    writer.write(batch(records), records)
    writer.close()
    (line,) = lines(tmp_path)
    assert line["id"] == "Owls" and line["article"] == "Owls" and line["split"] == "train" and line["complete"]
    assert line["complex"] == {"level": "0", "paragraphs": [COMPLEX]}
    assert line["simple"]["paragraphs"] == [["Owls hunt at night.", "They hear very well."], ["They live everywhere."]]
    assert line["gold"] == [[0, 0], [0, 1], [1, 2]] and line["gold_labels"] == ["partial", "partial", "aligned"]
    assert [(p["complex"], p["simple"], p["class"]) for p in line["pairs"]] == [
        ([0], [0, 1], "partial"), ([1], [2], "aligned"), ([0], [2], "not")]
    assert line["pairs"][0]["score"] == 0.5
    assert writer.complete_back() == (1, 1)


def test_an_article_without_pairs_writes_no_line_and_an_incomplete_pair_says_so(tmp_path):
    writer = ArticlesWriter(tmp_path, ["train"])
    writer.write(batch([]), [])
    assert writer.close() == []
    writer = ArticlesWriter(tmp_path, ["train"])
    records = [record([1], [2], "aligned")]
    writer.write(batch(records), records)
    writer.close()
    (line,) = lines(tmp_path)
    assert line["complete"] is False and writer.complete_back() == (0, 0)
