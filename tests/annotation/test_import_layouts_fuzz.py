"""The import endpoint fed the newer layouts with broken shapes (issue 30: the fuzz inputs extended to them):
wiki-manual TSV rows of any width and cells, HF parquet files of alignapp's export columns holding any
type, and pair-line JSONL records whose fields hold any JSON value. Whatever the input, the answer is
201 or a located 4xx — never a 500 — and a refused import stores nothing.

Hypothesis draws the inputs (``derandomize``: the same ones every run); a few dozen per layout keep
the test to seconds.
"""
from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.models import Article

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytestmark = pytest.mark.django_db
FUZZ = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

CELL_TEXT = st.text(st.characters(blacklist_characters="\t\n\r\x00", blacklist_categories=("Cs",)), max_size=12)
SENTENCE_ID = st.builds(lambda a, lv, p, s: f"{a}-{lv}-{p}-{s}", st.sampled_from(["1", "2", "x"]),
                        st.sampled_from(["0", "1", "adv"]), st.integers(0, 3), st.integers(0, 3))
LABEL = st.sampled_from(["aligned", "partialAligned", "notAligned", "partial", "not", "aligned-ish", ""])
WIKI_CELL = st.one_of(SENTENCE_ID, LABEL, CELL_TEXT, st.just("0.5"), st.just("nan"))
WIKI_ROW = st.one_of(
    st.tuples(LABEL, SENTENCE_ID, SENTENCE_ID, CELL_TEXT, CELL_TEXT).map(list),  # well-formed, odd values
    st.lists(WIKI_CELL, max_size=8),  # any width
)

EXPORT_COLUMNS = ("article", "complex_level", "simple_level", "complex_ids", "simple_ids", "complex", "simple", "label")
ARROW_TYPES = {"text": pa.string(), "int": pa.int64(), "float": pa.float64(), "ints": pa.list_(pa.int64()),
               "texts": pa.list_(pa.string()), "bool": pa.bool_()}
VALUES = {"text": st.one_of(CELL_TEXT, st.sampled_from(["adv", "ele", "aligned", "Bees fly."])),
          "int": st.integers(-3, 3), "float": st.floats(allow_nan=True, allow_infinity=True),
          "ints": st.lists(st.integers(-2, 3), max_size=3), "texts": st.lists(CELL_TEXT, max_size=3),
          "bool": st.booleans()}

JSON_VALUE = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-2, 3), st.floats(allow_nan=False), CELL_TEXT),
                          lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(CELL_TEXT, inner, max_size=2)),
                          max_leaves=6)
PAIR_LINE_KEYS = ("article", "complex_level", "simple_level", "complex_ids", "simple_ids", "complex", "simple",
                  "complex_sentences", "simple_sentences", "complex_paragraphs", "simple_paragraphs", "complete",
                  "label", "split", "score", "attributes")
GOOD_LINE = {"article": "Bees", "complex_level": "adv", "simple_level": "ele", "complex_ids": [0], "simple_ids": [0],
             "complex": "Bees fly far and wide.", "simple": "Bees fly.", "label": "aligned"}


@st.composite
def parquet_files(draw) -> bytes:
    """A parquet file of the hf export's columns, each column of a drawn type, 1-3 rows of drawn values."""
    kinds = {c: draw(st.sampled_from(sorted(ARROW_TYPES))) for c in EXPORT_COLUMNS if draw(st.integers(0, 9))}
    rows = draw(st.integers(1, 3))
    columns = {c: draw(st.lists(st.one_of(st.none(), VALUES[k]), min_size=rows, max_size=rows)) for c, k in kinds.items()}
    table = pa.table({c: pa.array(v, type=ARROW_TYPES[kinds[c]]) for c, v in columns.items()} or {"x": [1] * rows})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


@st.composite
def pair_lines(draw) -> bytes:
    """1-3 pair lines: the good one with some fields dropped or replaced by any JSON value."""
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        line = dict(GOOD_LINE)
        for key in draw(st.lists(st.sampled_from(PAIR_LINE_KEYS), max_size=4, unique=True)):
            if draw(st.booleans()):
                line.pop(key, None)
            else:
                line[key] = draw(JSON_VALUE)
        lines.append(json.dumps(line))
    return ("\n".join(lines) + "\n").encode()


def assert_answered(api, users, project, name: str, data: bytes) -> None:
    before = Article.objects.filter(project=project).count()
    response = api(users["rita"]).post(f"/api/projects/{project.pk}/import/",
                                       {"files": [SimpleUploadedFile(name, data)], "format": "auto", "on_conflict": "skip"})
    assert response.status_code in (201, 400, 413), (response.status_code, response.content[:500], data[:500])
    if response.status_code != 201:
        problems = response.json()["problems"]
        assert problems and all(isinstance(p, str) and p for p in problems), response.json()
        assert Article.objects.filter(project=project).count() == before


def test_a_wiki_manual_tsv_of_any_shape_is_imported_or_refused_with_its_line(api, users, project):
    @FUZZ
    @given(st.lists(WIKI_ROW, min_size=1, max_size=4))
    def check(rows: list[list[str]]) -> None:
        assert_answered(api, users, project, "fuzz.tsv", ("\n".join("\t".join(r) for r in rows) + "\n").encode())
    check()


def test_an_hf_parquet_of_any_column_types_is_imported_or_refused_with_its_row(api, users, project):
    @FUZZ
    @given(parquet_files())
    def check(data: bytes) -> None:
        assert_answered(api, users, project, "fuzz.parquet", data)
    check()


def test_pair_lines_of_any_values_are_imported_or_refused_with_their_line(api, users, project):
    @FUZZ
    @given(pair_lines())
    def check(data: bytes) -> None:
        assert_answered(api, users, project, "fuzz.jsonl", data)
    check()


# --- issue 36: every field of an hf/articles row and of a pair line, of every wrong type ---------------

WRONG = [None, True, 3, 2.5, "", "text", [1], ["a"], [[1]], {"x": 1}]
GOOD_ROW = {"example_id": "Bees", "article": "Bees", "split": "train", "complete": True,
            "complex": {"complex_level": "adv", "complex_article_title": "Bees", "complex_article_content": {
                "complex_sentence_id": ["adv-0-0", "adv-0-1"], "complex_sentence": ["Bees fly far.", "They make honey."]}},
            "simple": {"simple_level": "ele", "simple_article_title": "Bees", "simple_article_content": {
                "simple_sentence_id": ["ele-0-0"], "simple_sentence": ["Bees fly."]}},
            "sentence_alignment": {"complex_sentence_id": [["adv-0-0"]], "simple_sentence_id": [["ele-0-0"]],
                                   "label": ["aligned"], "provenance": ["majority"], "score": [0.9],
                                   "attributes": ["{}"], "derived": [False]}}


def _paths(value: dict, prefix: str = "") -> list[str]:
    """Every field of a row, nested ones as ``a.b.c``."""
    out = []
    for key, item in value.items():
        out.append(prefix + key)
        if isinstance(item, dict):
            out += _paths(item, f"{prefix}{key}.")
    return out


ROW_PATHS = _paths(GOOD_ROW)
ALL_LINE_KEYS = (*PAIR_LINE_KEYS, "provenance", "derived", "id")


def _replaced(row: dict, path: str, value) -> dict:
    row = json.loads(json.dumps(row))
    *parents, last = path.split(".")
    target = row
    for key in parents:
        target = target[key]
    target[last] = value
    return row


def _articles_parquet(rows: list[dict]) -> bytes | None:
    """The rows as a parquet file; None when Arrow cannot hold them (a struct with no field...)."""
    try:
        buf = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(rows), buf)
    except (pa.ArrowException, TypeError, ValueError):
        return None
    return buf.getvalue()


@st.composite
def article_rows(draw) -> bytes | None:
    """1-2 hf/articles rows, each with 1-3 fields (nested ones too) replaced by a value of a drawn type."""
    rows = []
    for _ in range(draw(st.integers(1, 2))):
        row = GOOD_ROW
        for path in draw(st.lists(st.sampled_from(ROW_PATHS), min_size=1, max_size=3, unique=True)):
            try:
                row = _replaced(row, path, draw(st.sampled_from(WRONG)))
            except (KeyError, TypeError):  # a field inside one already replaced
                continue
        rows.append(row)
    return _articles_parquet(rows)


def test_hf_articles_rows_of_any_field_types_are_imported_or_refused_with_their_row(api, users, project):
    @FUZZ
    @given(article_rows())
    def check(data: bytes | None) -> None:
        if data is not None:
            assert_answered(api, users, project, "articles.parquet", data)
    check()


def test_pair_lines_with_a_field_of_any_wrong_type_are_imported_or_refused_with_their_line(api, users, project):
    @FUZZ
    @given(st.lists(st.tuples(st.sampled_from(ALL_LINE_KEYS), st.sampled_from(WRONG)), min_size=1, max_size=3))
    def check(changes: list) -> None:
        line = dict(GOOD_LINE, complex_sentences=["Bees fly far and wide."], simple_sentences=["Bees fly."],
                    complex_paragraphs=[0], simple_paragraphs=[0], complete=True)
        for key, value in changes:
            line[key] = value
        assert_answered(api, users, project, "fuzz.jsonl", (json.dumps(line) + "\n").encode())
    check()


def test_every_field_of_every_wrong_type_is_answered_in_both_layouts(project):
    """Not drawn: each field of an hf/articles row and of a pair line, alone, holding each wrong value —
    imported or refused with a located problem (``file:line: field: message``), never an exception."""
    from annotation.services.corpus.importing import CorpusImportError, import_files

    tried = 0
    cases = [("a.parquet", _articles_parquet([_replaced(GOOD_ROW, path, value)])) for path in ROW_PATHS for value in WRONG]
    line = dict(GOOD_LINE, complex_sentences=["Bees fly far and wide."], simple_sentences=["Bees fly."])
    cases += [("a.jsonl", (json.dumps({**line, key: value}) + "\n").encode()) for key in ALL_LINE_KEYS for value in WRONG]
    for name, data in cases:
        if data is None:
            continue
        tried += 1
        before = Article.objects.filter(project=project).count()
        try:
            import_files(project, [(name, data)], on_conflict="skip")
        except CorpusImportError as exc:
            assert all(str(p).startswith(f"{name}:") for p in exc.problems), [str(p) for p in exc.problems]
            assert Article.objects.filter(project=project).count() == before
    assert tried > 250
