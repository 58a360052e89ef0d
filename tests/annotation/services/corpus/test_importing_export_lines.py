"""What an alignapp export writes, read back by the import (issue 27 §4): the ``jsonl`` format's
pair lines, a record's ``complete`` and ``split``, a tie's ``undecided`` value, and the empty split
files an export leaves."""
from __future__ import annotations

import json

import pytest

from annotation.models import Adjudication, Article, Document, Split
from annotation.services.corpus.importing import CorpusImportError, import_files
from annotation.services.review.exhaustive import exhaustive_pairs

pytestmark = pytest.mark.django_db


def jsonl(*records: dict) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def line(article: str, c_ids, s_ids, label: str, **extra) -> dict:
    c_texts = [f"Complex {article} {i}." for i in c_ids]
    s_texts = [f"Simple {article} {i}." for i in s_ids]
    return {"id": "p1", "article": article, "split": "dev", "complex_level": "adv", "simple_level": "ele",
            "complex_ids": c_ids, "simple_ids": s_ids, "complex": " ".join(c_texts), "simple": " ".join(s_texts),
            "complex_sentences": c_texts, "simple_sentences": s_texts, "complex_paragraphs": [i // 2 for i in c_ids],
            "simple_paragraphs": [0] * len(s_ids), "label": label, "provenance": "majority", "score": 0.5,
            "attributes": {"gain": 1.0}, "derived": False, **extra}


def test_pair_lines_of_a_jsonl_export_import_as_articles(project):
    lines = [line("Bees", [0, 1], [0], "aligned", complete=True), line("Bees", [3], [2], "partial", complete=True),
             line("Owls", [0], [0], "aligned-or-partial", complete=False)]
    result = import_files(project, [("dev.jsonl", jsonl(*lines)), ("test.jsonl", b"")])
    assert (result.articles, result.pairs) == (2, 3)
    assert "left out 1 empty file(s) (no records): test.jsonl" in result.warnings
    bees = Document.objects.get(article__title="Bees", level="adv")
    assert [list(p.sentences.values_list("text", flat=True)) for p in bees.paragraphs.order_by("index")] == [
        ["Complex Bees 0.", "Complex Bees 1."], ["Complex Bees 3."]]  # the named sentences, by paragraph
    assert sorted(Adjudication.objects.values_list("pair__article__title", "pair__complex_key", "pair__simple_key",
                                                   "value", "note")) == [
        ("Bees", "0,1", "0", "aligned", "source provenance: majority"),
        ("Bees", "2", "1", "partial", "source provenance: majority"),
        ("Owls", "0", "0", "aligned-or-partial", "source provenance: majority")]
    # Bees is marked complete but its lines carry sentences 0, 1, 3 of the complex document: never claimed complete
    assert exhaustive_pairs(project) == []
    assert any(w.startswith("1 article(s) have a document pair marked complete whose lines do not carry every sentence")
               for w in result.warnings)
    assert dict(Split.objects.values_list("article__title", "name")) == {"Bees": "dev", "Owls": "dev"}
    with pytest.raises(CorpusImportError) as caught:  # only empty files: still refused
        import_files(project, [("dev.jsonl", b""), ("test.jsonl", b"\n")])
    assert sorted(str(p) for p in caught.value.problems) == ["dev.jsonl: file is empty", "test.jsonl: file is empty"]


def test_pair_lines_keep_a_document_pair_complete_only_when_they_carry_all_its_sentences(project):
    sizes = {"complex_sentence_count": 2, "simple_sentence_count": 2}
    whole = [line("Bees", [0], [0], "aligned", complete=True, **sizes),
             line("Bees", [1], [1], "partial", complete=True, **sizes)]
    cut = [line("Owls", [0], [0], "aligned", complete=True, **sizes)]  # the Owls documents have 2 sentences each
    result = import_files(project, [("dev.jsonl", jsonl(*whole, *cut))])
    assert {Article.objects.get(pk=p.article_id).title for p in exhaustive_pairs(project)} == {"Bees"}
    assert any(w.startswith("1 article(s) have a document pair marked complete") for w in result.warnings)
    assert Document.objects.get(article__title="Owls", level="adv").sentences.count() == 1


def test_an_articles_record_says_complete_and_split_and_keeps_an_undecided_tie(project):
    record = {"id": "Rubbish", "split": "test", "complete": True,
              "complex": {"level": "adv", "paragraphs": [["C0.", "C1."]]}, "simple": {"level": "ele", "paragraphs": [["S0."]]},
              "pairs": [{"complex": [0], "simple": [0], "label": "undecided"}]}
    import_files(project, [("test.jsonl", jsonl(record))], gold_meaning="sparse")
    assert len(exhaustive_pairs(project)) == 1  # the record's complete wins over the import's meaning
    assert list(Adjudication.objects.values_list("value", "provenance")) == [("undecided", "imported")]
    assert Split.objects.get().name == "test"
    import_files(project, [("more.jsonl", jsonl({**record, "id": "Sparse", "complete": False}))], gold_meaning="exhaustive")
    assert len(exhaustive_pairs(project)) == 1


def test_a_pair_line_needs_each_sentence_of_a_longer_side(project):
    bad = line("Bees", [0, 1], [0], "aligned")
    del bad["complex_sentences"]
    with pytest.raises(CorpusImportError) as caught:
        import_files(project, [("dev.jsonl", jsonl(bad))])
    assert [str(p) for p in caught.value.problems] == [
        "dev.jsonl:1: complex_sentences: must list the text of each of the 2 complex sentences"]
