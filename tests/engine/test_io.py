from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from workers.engine.errors import EngineInputError
from workers.engine.io import (
    parse_pair,
    read_alignments,
    read_pairs,
    write_alignments,
)
from workers.engine.types import AlignedPair, Alignment

DATA = Path(__file__).parent / "data" / "tiny.jsonl"


def _rec(**over):
    r = {"id": "a", "complex": {"paragraphs": [["C0.", "C1."], ["C2."]]},
         "simple": {"paragraphs": [["S0."]]}}
    r.update(over)
    return r


def _read(text: str):
    return read_pairs(io.StringIO(text))


def test_it_reads_the_shipped_fixture_with_gold():
    pairs = read_pairs(DATA)
    assert [p.id for p in pairs][:2] == ["split", "merge"]
    assert pairs[0].gold and pairs[0].gold[0] == (0, 0)
    assert len(pairs[0].complex.paragraphs) == 2


def test_text_documents_are_split_into_paragraphs_and_sentences():
    pairs = read_pairs(DATA)
    p = next(p for p in pairs if p.id == "text-input")
    assert p.complex.paragraphs == (
        ("The bakery on Elm Street opened a second oven last week.",
         "It now bakes twice as much bread."),
        ("The owner hired three new bakers.",),
    )
    assert len(p.simple) == 2


def test_pre_split_sentences_are_never_re_split():
    p = parse_pair(_rec(simple={"paragraphs": [["One. Two. Three."]]}))
    assert p.simple.sentences == ("One. Two. Three.",)


def test_optional_fields_are_parsed():
    p = parse_pair(_rec(gold=[[2, 0]], gold_labels=["partial"], identical=[[0, 0]],
                        complex={"paragraphs": [["x"], ["y", "z"]], "level": 3}))
    assert p.gold == ((2, 0),) and p.gold_labels == ("partial",)
    assert p.identical == ((0, 0),) and p.complex.level == "3"


@pytest.mark.parametrize(
    "line, field, fragment",
    [
        ('{"id": "a", "complex": ', None, "invalid JSON"),
        ("[1, 2]", None, "JSON object"),
        (json.dumps({"id": "a", "simple": {"paragraphs": []}}), "complex", "missing"),
        (json.dumps(_rec(complex={"paragraphs": [["ok", 3]]})), "complex.paragraphs[0][1]",
         "string"),
        (json.dumps(_rec(simple={"paragraphs": "S0."})), "simple.paragraphs", "list"),
        (json.dumps(_rec(simple={"text": "x", "paragraphs": []})), "simple", "exactly one"),
        (json.dumps(_rec(gold=[[5, 0]])), "gold[0]", "out of range"),
        (json.dumps(_rec(gold=[[0, "0"]])), "gold[0]", "integers"),
        (json.dumps(_rec(gold=[[0, 0]], gold_labels=["maybe"])), "gold_labels[0]", "aligned"),
        (json.dumps(_rec(id="")), "id", "non-empty"),
    ],
)
def test_malformed_records_name_the_line_and_field(line, field, fragment):
    text = json.dumps(_rec(id="first")) + "\n\n" + line + "\n"
    with pytest.raises(EngineInputError) as err:
        _read(text)
    assert err.value.line == 3
    assert err.value.field == field
    assert fragment in str(err.value)
    assert ":3:" in str(err.value)


def test_a_repeated_id_is_an_error():
    text = json.dumps(_rec()) + "\n" + json.dumps(_rec()) + "\n"
    with pytest.raises(EngineInputError, match="duplicate id 'a' \\(first on line 1\\)"):
        _read(text)


def test_errors_name_the_file(tmp_path):
    f = tmp_path / "bad.jsonl"
    f.write_text("{nope\n", encoding="utf-8")
    with pytest.raises(EngineInputError, match=r"bad\.jsonl:1: invalid JSON"):
        read_pairs(f)


def test_an_unknown_language_is_rejected_with_the_choices():
    with pytest.raises(ValueError, match="choose one of: en"):
        parse_pair(_rec(), language="xx")


def test_alignments_round_trip_through_jsonl(tmp_path):
    a = [Alignment("a", [AlignedPair((0, 1), (2,), "partial", 0.5, {"sim_max": 0.7}),
                         AlignedPair((3,), (3,), "aligned", 0.9)]),
         Alignment("b", [])]
    out = tmp_path / "out.jsonl"
    assert write_alignments(a, out) == 2
    first = json.loads(out.read_text().splitlines()[0])
    assert first["pairs"][0] == {"complex": [0, 1], "simple": [2], "label": "partial",
                                 "score": 0.5, "features": {"sim_max": 0.7}}
    back = read_alignments(out)
    assert [x.id for x in back] == ["a", "b"]
    assert back[0].pairs[0].complex == (0, 1) and back[0].pairs[1].label == "aligned"


def test_bad_predictions_are_reported_precisely():
    bad = json.dumps({"id": "a", "pairs": [{"complex": [0], "simple": [], "label": "aligned"}]})
    with pytest.raises(EngineInputError) as err:
        read_alignments(io.StringIO(bad + "\n"))
    assert err.value.field == "pairs[0].simple" and err.value.line == 1
