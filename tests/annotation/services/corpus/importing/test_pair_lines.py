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


LONG = "x" * 51
# issue 36 items 3, 5-7: (name, lines, the one problem expected). Each was imported before (201), or
# answered a 500 on PostgreSQL (a level over 50 characters).
BAD_LINES = [
    ("paragraphs out of sentence order",
     [line("Bees", [0], [0], "aligned", complex_paragraphs=[0]), line("Bees", [1], [1], "aligned", complex_paragraphs=[1]),
      line("Bees", [2], [2], "aligned", complex_paragraphs=[0])],
     "dev.jsonl:3: complex_paragraphs: sentence 2 of level 'adv' is in paragraph 0, after sentence 1 in paragraph 1"),
    ("the same pair twice with two labels",
     [line("Bees", [0], [0], "aligned"), line("Bees", [0], [0], "partial")],
     "dev.jsonl:2: label: lists the same 'adv' and 'ele' sentences as line 1 with another label ('partial', not "
     "'aligned')"),
    ("a conflicting complete flag",
     [line("Bees", [0], [0], "aligned", complete=True), line("Bees", [1], [1], "aligned", complete=False)],
     "dev.jsonl:2: complete: is false, but line 1 said true for the same levels 'adv' → 'ele'"),
    ("an empty article", [line("", [0], [0], "aligned")], "dev.jsonl:1: article: must be a non-empty text"),
    ("a blank article", [line("   ", [0], [0], "aligned")], "dev.jsonl:1: article: must be a non-empty text"),
    ("an object as the article", [line({"x": [1]}, [0], [0], "aligned")],
     "dev.jsonl:1: article: must be a non-empty text (the article's title), got an object"),
    ("a list as the article", [line([1], [0], [0], "aligned")], "dev.jsonl:1: article: must be a non-empty text"),
    ("levels a→b and b→a",
     [line("Bees", [0], [0], "aligned"), line("Bees", [0], [0], "aligned", complex_level="ele", simple_level="adv",
                                              complex_sentences=["Simple Bees 0."], simple_sentences=["Complex Bees 0."])],
     "dev.jsonl:2: complex_level: level 'ele' is the complex side here but the simple side of 'adv' at line 1"),
    ("a complex level over 50 characters", [line("Bees", [0], [0], "aligned", complex_level=LONG)],
     "dev.jsonl:1: complex_level: must be at most 50 characters, got 51"),
    ("a simple level over 50 characters", [line("Bees", [0], [0], "aligned", simple_level=LONG)],
     "dev.jsonl:1: simple_level: must be at most 50 characters, got 51"),
    ("a level that is an object", [line("Bees", [0], [0], "aligned", simple_level={"a": 1})],
     "dev.jsonl:1: simple_level: must be a level name (a non-empty string or an integer), got an object"),
]


@pytest.mark.parametrize("name, lines, expected", BAD_LINES, ids=[c[0] for c in BAD_LINES])
def test_bad_pair_lines_are_refused_where_they_are_and_nothing_is_stored(project, name, lines, expected):
    with pytest.raises(CorpusImportError) as caught:
        import_files(project, [("dev.jsonl", jsonl(*lines))])
    problems = [str(p) for p in caught.value.problems]
    assert len(problems) == 1 and problems[0].startswith(expected), problems
    assert not Article.objects.exists() and not Adjudication.objects.exists()


def test_the_same_pair_twice_with_one_label_is_one_pair(project):
    result = import_files(project, [("dev.jsonl", jsonl(line("Bees", [0], [0], "aligned"), line("Bees", [0], [0], "aligned"),
                                                        line("Bees", [1], [1], "partial", complete=True)))])
    assert (result.articles, result.pairs) == (1, 2)
