"""Line-aligned ``X.src`` / ``X.dst`` files."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, CandidatePair, Document, PairSentence
from annotation.services.corpus.importing import import_files

pytestmark = pytest.mark.django_db


def test_each_line_pair_becomes_a_one_to_one_imported_pair_without_gold(project):
    src = b"The cat sat on the mat. It purred.\nRain fell all day.\nThe end.\n"
    dst = b"The cat sat.\nIt rained.\nEnd.\n"
    result = import_files(project, [("wiki.train.src", src), ("wiki.train.dst", dst)])
    assert (result.format, result.articles, result.documents, result.sentences, result.pairs) == ("parallel", 1, 2, 6, 3)
    pairs = list(CandidatePair.objects.order_by("id"))
    assert [(p.complex_key, p.simple_key, p.origin, p.predictions.count()) for p in pairs] == [
        ("0", "0", "import", 0), ("1", "1", "import", 0), ("2", "2", "import", 0)]
    assert Adjudication.objects.count() == 0
    assert {(m.side, m.sentence.text) for m in PairSentence.objects.filter(pair=pairs[0])} == {
        ("complex", "The cat sat on the mat. It purred."), ("simple", "The cat sat.")}


def test_lines_are_kept_whole_one_paragraph_each(project):
    import_files(project, [("x.src", b"A. B. C.\r\nD.\r\n"), ("x.dst", b"A.\r\nD.")])
    src = Document.objects.get(article__title="x", level="src")
    assert src.rank == 0 and Document.objects.get(article__title="x", level="dst").rank == 1
    assert list(src.sentences.values_list("text", flat=True)) == ["A. B. C.", "D."]
    assert src.paragraphs.count() == 2


def test_several_stems_make_several_articles(project):
    files = [("d/train.src", b"a\n"), ("d/train.dst", b"b\n"), ("d/test.src", b"c\n"), ("d/test.dst", b"d\n")]
    result = import_files(project, files, "parallel")
    assert result.articles == 2 and result.pairs == 2
