"""Bad inputs: every one is refused with a message that says where the problem is, and writes nothing."""
from __future__ import annotations

import io
import json
import tarfile
import zipfile

import pytest

from annotation.models import Article
from annotation.services.corpus.importing import CorpusImportError, Problem, import_files

pytestmark = pytest.mark.django_db


def jsonl(*records: object) -> bytes:
    return "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records).encode() + b"\n"


def rec(rid: str = "a", **over: object) -> dict:
    record = {"id": rid, "complex": {"paragraphs": [["C0.", "C1."]]}, "simple": {"paragraphs": [["S0."]]}}
    record.update(over)
    return record


def zip_of(**members: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def tar_of(name: str, data: bytes) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


GOOD_PAIR = [("Good-adv.txt", b"A complex sentence."), ("Good-ele.txt", b"A simple one.")]

# (id, files, import options, settings overrides, substrings the message must contain)
CASES = [
    ("non-utf8", [("bad.jsonl", jsonl(rec()) + b"\xff\xfe")], {}, {},
     ["bad.jsonl:2:", "not valid UTF-8 at byte offset 94", "0xff"]),
    ("empty file", [("Empty-adv.txt", b""), ("Empty-ele.txt", b"Fine.")], {}, {}, ["Empty-adv.txt: file is empty"]),
    ("whitespace-only file", [("w.story", b"  \n\n \t\n")], {}, {}, ["w.story: file is empty"]),
    ("binary file with NUL bytes", [("pic-adv.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), *GOOD_PAIR], {}, {},
     ["pic-adv.txt: binary file (NUL byte at byte offset 8)"]),
    ("mostly non-text file", [("noise-adv.txt", bytes(range(1, 32)) * 20), ("noise-ele.txt", b"Fine.")], {}, {},
     ["noise-adv.txt: binary file"]),
    ("oversized file", [("big.jsonl", jsonl(rec()) * 3)], {}, {"MAX_UPLOAD_BYTES": 100},
     ["big.jsonl: file is", "over the 100 bytes limit per file"]),
    ("oversized import", [("a.jsonl", jsonl(rec("a"))), ("b.jsonl", jsonl(rec("b")))], {},
     {"MAX_UPLOAD_BYTES": 100, "IMPORT_MAX_BYTES": 150},
     ["the import totals", "over the 150 bytes limit per import (IMPORT_MAX_BYTES=150)"]),
    ("malformed JSON line", [("in.jsonl", jsonl(rec("a"), '{"id": "b", "complex": '))], {}, {},
     ["in.jsonl:2: malformed JSON"]),
    ("record not an object", [("in.jsonl", jsonl([1, 2]))], {}, {}, ["in.jsonl:1: a record must be a JSON object, got list"]),
    ("missing field", [("in.jsonl", jsonl({"id": "a", "complex": {"paragraphs": [["C."]]}}))], {}, {},
     ["in.jsonl:1: simple: is missing"]),
    ("wrong type", [("in.jsonl", jsonl(rec(complex=["C0."])))], {}, {},
     ["in.jsonl:1: complex: must be an object with 'paragraphs' or 'text', got list"]),
    ("both text and paragraphs", [("in.jsonl", jsonl(rec(simple={"text": "T.", "paragraphs": [["T."]]})))], {}, {},
     ["in.jsonl:1: simple: give exactly one of"]),
    ("sentence not a string", [("in.jsonl", jsonl(rec(complex={"paragraphs": [["C0.", 7]]})))], {}, {},
     ["in.jsonl:1: complex.paragraphs[0][1]: sentence must be a string, got int"]),
    ("empty sentence string", [("in.jsonl", jsonl(rec(simple={"paragraphs": [["  "]]})))], {}, {},
     ["in.jsonl:1: simple.paragraphs[0][0]: sentence is an empty string"]),
    ("empty paragraphs list", [("in.jsonl", jsonl(rec(simple={"paragraphs": []})))], {}, {},
     ["in.jsonl:1: simple.paragraphs: is empty"]),
    ("empty paragraph", [("in.jsonl", jsonl(rec(simple={"paragraphs": [["S."], []]})))], {}, {},
     ["in.jsonl:1: simple.paragraphs[1]: is an empty paragraph"]),
    ("gold index out of range", [("in.jsonl", jsonl(rec(gold=[[0, 0], [1, 5]])))], {}, {},
     ["in.jsonl:1: gold[1]: simple index 5 out of range (the simple document has 1 sentences)"]),
    ("malformed gold link", [("in.jsonl", jsonl(rec(gold=[[0, "0"]])))], {}, {},
     ["in.jsonl:1: gold[0]: must be a pair of integers"]),
    ("identical index out of range", [("in.jsonl", jsonl(rec(identical=[[9, 0]])))], {}, {},
     ["in.jsonl:1: identical[0]: complex index 9 out of range"]),
    ("unknown gold label", [("in.jsonl", jsonl(rec(gold=[[0, 0]], gold_labels=["maybe"])))], {}, {},
     ["in.jsonl:1: gold_labels[0]: unknown label 'maybe'"]),
    ("same level on both sides", [("in.jsonl", jsonl(rec(simple={"paragraphs": [["S."]], "level": "complex"})))], {}, {},
     ["in.jsonl:1: simple.level: must differ from the complex level"]),
    ("duplicate ids in the file", [("in.jsonl", jsonl(rec("a"), rec("b"), rec("a")))], {}, {},
     ["in.jsonl:3: id: duplicate id 'a' (first used at in.jsonl:1)"]),
    ("duplicate title across files", [("x/s.story", b"Body.\n@highlight\nH\n"), ("y/s.story", b"Body.\n@highlight\nH\n")],
     {}, {}, ["y/s.story: duplicate article title 's' (also from x/s.story)"]),
    ("src/dst line counts differ", [("x.src", b"a\nb\n"), ("x.dst", b"a\nb\nc\n")], {}, {},
     ["x.src: x.src has 2 lines but x.dst has 3"]),
    ("missing partner file", [("x.src", b"a\n")], {}, {}, ["x.src: missing partner file x.dst for x.src"]),
    ("empty line on one side", [("x.src", b"a\nb\nc\n"), ("x.dst", b"a\n \nc\n")], {}, {},
     ["x.dst:2: empty line at line 2 of x.dst"]),
    ("story without highlights", [("s.story", b"Just a body. No summary.\n")], {}, {}, ["s.story: story has no @highlight lines"]),
    ("story without body", [("s.story", b"@highlight\n\nOnly a highlight\n")], {}, {}, ["s.story:1: story has no body text"]),
    ("highlight without a sentence", [("s.story", b"Body.\n\n@highlight\n\n@highlight\nH\n")], {}, {},
     ["s.story:3: @highlight: no highlight sentence follows"]),
    ("unknown extension", [("notes.docx", b"PK..."), *GOOD_PAIR], {}, {}, ["notes.docx: unknown extension .docx"]),
    ("mixed formats", [("a.jsonl", jsonl(rec())), *GOOD_PAIR], {}, {}, ["mixed formats: jsonl (a.jsonl); levels (Good-adv.txt"]),
    ("bad level file name", [("Amsterdam.txt", b"Text."), *GOOD_PAIR], {}, {},
     ["Amsterdam.txt: bad level file name: expected <Title>-<level>.<ext>"]),
    ("mismatched levels", [("Water-0.txt", b"A."), ("Water-ele.txt", b"B.")], {}, {},
     ["Water-ele.txt: mismatched levels in article 'Water'"]),
    ("single-level article", [("Lonely-adv.txt", b"Alone."), *GOOD_PAIR], {}, {},
     ["Lonely-adv.txt: article 'Lonely' has a single level ('adv')"]),
    ("unknown level name", [("Hard-hard.txt", b"A."), ("Hard-easy.txt", b"B.")], {}, {},
     ["Hard-hard.txt: unknown level 'hard'", "adv < int < ele"]),
    ("levels from different scales", [("Mix-adv.txt", b"A."), ("Mix-simple.txt", b"B.")], {}, {},
     ["Mix-adv.txt: levels adv, simple of article 'Mix' come from different scales"]),
    ("duplicate levels after case-folding", [("Twice-adv.txt", b"A."), ("Twice-ADV.txt", b"B."), ("Twice-ele.txt", b"C.")],
     {}, {}, ["Twice-ADV.txt: duplicate level 'adv' in article 'Twice' (also Twice-adv.txt)"]),
    ("zip with path traversal", [("corpus.zip", zip_of(**{"../evil-adv.txt": b"A.", "ok-ele.txt": b"B."}))], {}, {},
     ["corpus.zip: unsafe path '../evil-adv.txt' in archive (path traversal)"]),
    ("tar with an absolute path", [("corpus.tar.gz", tar_of("/etc/evil-adv.txt", b"A."))], {}, {},
     ["corpus.tar.gz: unsafe path '/etc/evil-adv.txt' in archive (path traversal)"]),
    ("unsupported language given", GOOD_PAIR, {"language": "xx"}, {}, ["language: unsupported language 'xx'", "en, fr, es, de"]),
    ("unknown format", GOOD_PAIR, {"fmt": "csv"}, {}, ["format: unknown format 'csv'"]),
]


@pytest.mark.parametrize(("files", "options", "overrides", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_bad_input_is_refused_with_its_location_and_nothing_is_written(project, counts, settings, files, options, overrides, expected):
    for key, value in overrides.items():
        setattr(settings, key, value)
    before = counts()
    with pytest.raises(CorpusImportError) as caught:
        import_files(project, files, **options)
    message = str(caught.value)
    for part in expected:
        assert part in message
    assert caught.value.problems and all(isinstance(p, Problem) for p in caught.value.problems)
    assert counts() == before


def test_a_title_already_in_the_project_is_refused_by_name(project, counts):
    Article.objects.create(project=project, title="a")
    before = counts()
    with pytest.raises(CorpusImportError) as caught:
        import_files(project, [("in.jsonl", jsonl(rec("b"), rec("a")))])
    assert str(caught.value) == "in.jsonl:2: id: article 'a' already exists in project 'Newsela sample' " \
        "(remove or rename it, or import again skipping the articles already there: tick \"Skip articles already " \
        "in the project\" on the import page, --on-conflict skip on import_corpus, \"on_conflict\": \"skip\" in the API)"
    assert counts() == before


def test_an_unsupported_project_language_is_refused_when_text_must_be_split(project, counts):
    project.language = "ja"
    project.save()
    before = counts()
    with pytest.raises(CorpusImportError) as caught:
        import_files(project, GOOD_PAIR + [("Other-adv.txt", b"A."), ("Other-ele.txt", b"B.")])
    assert [str(p) for p in caught.value.problems] == [caught.value.problems[0].field + ": " + caught.value.problems[0].message]
    assert "unsupported language 'ja'" in str(caught.value)
    assert counts() == before


def test_one_bad_file_among_good_ones_imports_nothing(project, counts):
    before = counts()
    with pytest.raises(CorpusImportError):
        import_files(project, [*GOOD_PAIR, ("Bad-adv.txt", b"A."), ("Bad-ele.txt", b"\xc3\x28")])
    assert counts() == before


def test_several_problems_in_one_file_are_all_reported(project):
    data = jsonl(rec("a", gold=[[7, 0]]), "not json", rec("c", simple={"paragraphs": [[1]]}))
    with pytest.raises(CorpusImportError) as caught:
        import_files(project, [("in.jsonl", data)])
    assert [(p.file, p.line, p.field) for p in caught.value.problems] == [
        ("in.jsonl", 1, "gold[0]"), ("in.jsonl", 2, None), ("in.jsonl", 3, "simple.paragraphs[0][0]")]
    assert len(str(caught.value).splitlines()) == 3


def test_problems_are_capped_and_the_rest_counted(project):
    data = jsonl(*["{bad"] * 60)
    with pytest.raises(CorpusImportError) as caught:
        import_files(project, [("in.jsonl", data)])
    problems = caught.value.problems
    assert len(problems) == 51
    assert problems[-1].message == "... and 10 more problems not shown"


def test_a_problem_reads_file_line_field_message():
    assert str(Problem("a.jsonl", 3, "gold[0]", "bad")) == "a.jsonl:3: gold[0]: bad"
    assert str(Problem("a.txt", None, None, "bad")) == "a.txt: bad"
    assert str(Problem("", None, "language", "bad")) == "language: bad"


def test_a_failure_while_writing_rolls_everything_back(project, counts, monkeypatch):
    from annotation.models import Adjudication

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(Adjudication.objects, "bulk_create", boom)
    before = counts()
    with pytest.raises(RuntimeError, match="disk full"):
        import_files(project, [("in.jsonl", jsonl(rec("a", gold=[[0, 0]])))])
    assert counts() == before
