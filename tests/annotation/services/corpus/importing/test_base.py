"""What every import format's parser shares (``corpus/importing/base.py``): file names, lines split as the
validation splits them, the language, splits named by a path, the parse context's limits and sentence
splitting, and one document per level from keyed sentences."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from annotation.services.corpus.importing import base
from annotation.services.corpus.importing.limits import Limits
from annotation.services.corpus.importing.problems import Problems

pytestmark = pytest.mark.django_db  # Limits.from_settings reads the settings


def context(**limits) -> base.ParseContext:
    return base.ParseContext(language="en", problems=Problems(), limits=replace(Limits.from_settings(), **limits))


@pytest.mark.parametrize("name,basename,stem,extension", [
    ("corpus/Bees-adv.TXT", "Bees-adv.TXT", "Bees-adv", "txt"),
    (".hidden", ".hidden", ".hidden", ""),
    ("dir/archive.tar.gz", "archive.tar.gz", "archive.tar", "gz"),
    ("README", "README", "README", ""),
])
def test_a_files_basename_stem_and_extension(name, basename, stem, extension):
    f = base.TextFile(name)
    assert (f.basename, f.stem, f.extension) == (basename, stem, extension)


def test_an_input_file_opens_from_memory_or_from_disk(tmp_path):
    assert base.InputFile("a.txt", 3, data=b"abc").open().read() == b"abc"
    assert base.InputFile("empty.txt", 0).open().read() == b""
    path = tmp_path / "b.txt"
    path.write_bytes(b"on disk")
    with base.InputFile("b.txt", 7, path=Path(path)).open() as fh:
        assert fh.read() == b"on disk"


@pytest.mark.parametrize("piece,lines", [
    ("one\n", ["one"]), ("one\r\n", ["one"]), ("one", ["one"]), ("one\r", ["one"]),
    ("a\rb\n", ["a", "b"]), ("\n", [""]),
])
def test_a_piece_splits_into_lines_without_its_terminator(piece, lines):
    assert base.split_line(piece) == lines


def test_a_language_is_normalised_and_an_unsupported_one_named():
    assert base.normalise_language(" en_US ") == "en" and base.normalise_language("DE-at") == "de"
    assert base.language_problem("en-GB") is None
    assert base.language_problem("xx").startswith("unsupported language 'xx' for sentence splitting; choose one of:")


@pytest.mark.parametrize("name,split,found", [
    ("manual-dev.parquet", "dev", {"dev"}),
    ("manual/validation/0000.parquet", "dev", {"dev"}),
    ("train/data-00000-of-00001.arrow", "train", {"train"}),
    ("test.tsv", "test", {"test"}),
    ("eval_set/part.jsonl", "test", {"test"}),
    ("contest.tsv", None, set()),  # "test" inside a word is no split
    ("train-test.parquet", None, {"train", "test"}),
    ("Bees-adv.txt", None, set()),
])
def test_a_path_names_its_split_as_datasets_reads_it(name, split, found):
    assert base.splits_named(name) == (split, found)


def test_a_name_with_two_splits_is_reported_never_dropped():
    problems = Problems()
    assert base.split_from_name("train-test.parquet", problems) is None
    assert [p.message for p in problems.items] == [
        "the name says two splits (test, train); rename it so that it names one of train, dev (validation), test"]
    assert base.split_from_name("dev.tsv", problems) == "dev" and len(problems) == 1


def test_split_makes_paragraphs_of_sentences_and_refuses_an_over_long_text_or_unknown_language():
    ctx = context(document_chars=50)
    assert ctx.split("Bees dance. They tell the way.\n\nOwls hunt.") == [["Bees dance.", "They tell the way."],
                                                                        ["Owls hunt."]]
    assert ctx.split("x" * 51, "in.jsonl", 3, "complex.text") is None
    (problem,) = ctx.problems.items
    assert (problem.file, problem.line, problem.field) == ("in.jsonl", 3, "complex.text")
    assert "a document text has 51 characters" in problem.message and problem.limit == "IMPORT_MAX_DOCUMENT_CHARS"
    other = base.ParseContext(language="xx", problems=Problems())
    assert other.split("One.") is None and other.split("Two.") is None
    assert [p.field for p in other.problems.items] == ["language"]  # reported once


def test_produced_counts_articles_until_a_limit_is_passed():
    ctx = context(sentences=3)
    article = base.ParsedArticle("a", "in.jsonl", 4, [base.ParsedDocument("adv", 0, [["One.", "Two."]])])
    assert ctx.produced(article) and (ctx.sentences_produced, ctx.chars_produced) == (2, 8)
    assert not ctx.produced(article)  # 4 sentences > 3
    (problem,) = ctx.problems.items
    assert problem.line == 4 and problem.limit == "IMPORT_MAX_SENTENCES" and "article 'a'" in problem.message
    assert ctx.sentences_produced == 2  # the refused article is not counted
    chars = context(total_bytes=5)
    assert not chars.room("f", None, 1, 6) and chars.problems.items[0].limit == "IMPORT_MAX_BYTES"


def test_lines_skip_a_byte_order_mark_and_count_what_was_read():
    ctx = context()
    f = base.InputFile("in.txt", 0, data="\ufefffirst\r\nsecond\rthird\n".encode())
    assert list(ctx.lines(f)) == [(1, "first"), (2, "second"), (3, "third")]
    assert ctx.bytes_read == len(f.data) - len("\ufeff".encode())  # the mark is no text
    assert context().text(base.InputFile("t.txt", 0, data="\ufeffhello".encode())) == "hello"


def test_level_documents_order_levels_by_rank_and_sentences_by_key():
    sentences = {"ele": {(0, 1): "E1.", (0, 0): "E0."}, "adv": {(1, 0): "A2.", (0, 0): "A0.", (0, 1): "A1."}}
    documents, index = base.level_documents(sentences, {"adv": 0, "ele": 2}, lambda key, text: (key[0], text),
                                            ids_key="ids")
    assert [(d.level, d.rank, d.paragraphs) for d in documents] == [("adv", 0, [["A0.", "A1."], ["A2."]]),
                                                                   ("ele", 2, [["E0.", "E1."]])]
    assert documents[0].meta == {"ids": [[0, 0], [0, 1], [1, 0]]} and documents[0].sentence_count == 3
    assert index == {"adv": {(0, 0): 0, (0, 1): 1, (1, 0): 2}, "ele": {(0, 0): 0, (0, 1): 1}}
    plain, _ = base.level_documents({"x": {1: "X."}}, {"x": 0}, lambda key, text: (0, text))
    assert plain[0].meta == {}
