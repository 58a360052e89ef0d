"""Property tests of the engine's parsers: whatever text or JSON comes in, the only failure is the
documented one (``EngineInputError`` for the JSONL readers, ``OptionError`` for method options), and
what is accepted keeps the documented shape.

hypothesis generates the inputs: arbitrary text (lone surrogates and NUL included), arbitrary JSON
values, records that follow the input contract more or less, and option dicts for every method.
"""
from __future__ import annotations

import io
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workers.engine.errors import EngineInputError
from workers.engine.io import parse_alignment, parse_pair, read_alignments, read_pairs
from workers.engine.methods import available_methods, method_schema
from workers.engine.options import OptionError, check_config
from workers.engine.text import normalise, split_document, split_paragraphs, split_sentences

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = (st.none() | st.booleans() | st.integers() | st.integers(min_value=-(10**30), max_value=10**30)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)
sentences = st.lists(st.text(max_size=30), max_size=3)
documents = st.one_of(
    st.fixed_dictionaries({"paragraphs": st.lists(sentences, max_size=3)},
                          optional={"level": st.one_of(st.text(max_size=5), st.integers(), st.none())}),
    st.fixed_dictionaries({"text": st.text(max_size=80)}),
    json_values,
)
links = st.lists(st.one_of(st.lists(st.integers(-2, 6), min_size=2, max_size=2), json_values), max_size=4)
records = st.one_of(
    st.fixed_dictionaries(
        {"id": st.one_of(st.text(max_size=6), st.integers(), json_values), "complex": documents, "simple": documents},
        optional={"gold": st.one_of(links, json_values), "gold_labels": st.one_of(
            st.lists(st.sampled_from(["aligned", "partial", "not", "x"]), max_size=4), json_values),
                  "identical": links, "level": json_values}),
    json_values,
)


def _reads_or_refuses(text: str):
    try:
        return read_pairs(io.StringIO(text))
    except EngineInputError as exc:
        assert str(exc)  # a message naming where
        return None


@FAST
@given(st.text(max_size=300))
def test_any_text_is_read_or_refused_with_an_engine_input_error(text):
    _reads_or_refuses(text)


@FAST
@given(st.lists(records, min_size=1, max_size=3))
def test_any_jsonl_record_is_read_or_refused_and_what_is_read_is_consistent(rows):
    text = "\n".join(json.dumps(r) for r in rows) + "\n"
    pairs = _reads_or_refuses(text)
    for pair in pairs or ():
        assert pair.id and isinstance(pair.id, str)
        nc, ns = len(pair.complex), len(pair.simple)
        for i, j in (pair.gold or ()) + pair.identical:
            assert 0 <= i < nc and 0 <= j < ns  # links point into the documents
        if pair.gold_labels is not None:
            assert len(pair.gold_labels) == len(pair.gold)


@pytest.mark.parametrize("line", [
    "9" * 5000,  # an integer past Python's limit on digits
    '{"id": ' + "1" * 5000 + "}",
    "[" * 100_000 + "]" * 100_000,  # nesting past the recursion limit
    '{"id": "a", "complex": ' + "[" * 50_000 + "]" * 50_000 + "}",
    '{"id": NaN, "complex": {}, "simple": {}}',
    '{"id": "a", "complex": {"paragraphs": [["\\ud800"]]}, "simple": {"paragraphs": [["\\u0000"]]}, "gold": [[0, 1e999]]}',
    "\x00\ud800",
])
def test_hostile_lines_are_refused_with_an_engine_input_error(line):
    with pytest.raises(EngineInputError):
        read_pairs(io.StringIO(line + "\n"))
    with pytest.raises(EngineInputError):
        read_alignments(io.StringIO(line + "\n"))


@FAST
@given(json_values)
def test_parse_pair_and_parse_alignment_raise_only_engine_input_errors(value):
    for parse in (parse_pair, parse_alignment):
        try:
            parse(value)
        except EngineInputError:
            pass


@FAST
@given(st.sampled_from(available_methods()), st.dictionaries(st.text(max_size=25), json_values, max_size=4),
       st.data())
def test_method_options_are_accepted_only_when_every_value_fits_its_declared_range(method, config, data):
    schema = method_schema(method)
    if schema:  # also try the method's real option names with generated values
        option = data.draw(st.sampled_from(schema))
        config = {**config, option.name: data.draw(json_values)}
    try:
        check_config(method, schema, config)
    except OptionError as exc:
        assert exc.problems and set(exc.problems) <= set(config)
        return
    by_name = {o.name: o for o in schema}
    for key, value in config.items():
        option = by_name[key]  # no unknown key is accepted
        if value is None:
            continue
        if option.type in ("int", "float"):
            assert not isinstance(value, bool) and math.isfinite(value)
            assert option.min is None or value >= option.min
            assert option.max is None or value <= option.max
        if option.choices:
            assert value in option.choices


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_no_float_option_of_any_method_takes_a_non_finite_number(value):
    for method in available_methods():
        for option in method_schema(method):
            if option.type == "float":
                with pytest.raises(OptionError, match="finite"):
                    check_config(method, method_schema(method), {option.name: value})


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200), st.sampled_from(["en", "fr", "de", "ru"]))
def test_any_text_splits_into_paragraphs_of_non_empty_sentences(text, language):
    for paragraph in split_document(text, language):
        assert all(isinstance(s, str) and s.strip() == s and s for s in paragraph)
    for paragraph in split_paragraphs(text):
        assert paragraph.strip() and "\n" not in paragraph
        assert all(s for s in split_sentences(paragraph, language))
    assert normalise(normalise(text)) == normalise(text)  # normalising is idempotent


def test_an_unsupported_language_is_a_value_error_naming_the_supported_ones():
    with pytest.raises(ValueError, match="choose one of: en, fr"):
        split_sentences("Hello.", "xx")
