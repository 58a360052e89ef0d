"""Method option schemas: one per method, checked by get_aligner and the CLI."""
from __future__ import annotations

from pathlib import Path

import pytest

from workers.engine.cli import main
from workers.engine.methods import available_methods, get_aligner, method_schema
from workers.engine.options import Option, OptionError, check_config

DATA = Path(__file__).parent / "data" / "tiny.jsonl"


def test_every_method_declares_its_options():
    for method in available_methods():
        schema = method_schema(method)
        assert schema, method
        assert len({o.name for o in schema}) == len(schema)


def test_an_out_of_range_value_lists_the_valid_range():
    with pytest.raises(OptionError) as err:
        get_aligner("tfidf", {"max_complex": 0})
    assert err.value.problems == {"max_complex": "must be >= 1, got 0"}
    assert "max_complex (int in [1, 10], default 2)" in str(err.value)


def test_types_are_checked_and_bools_are_not_numbers():
    schema = (Option("k", "int", 8, min=1), Option("x", "float", 0.5), Option("on", "bool", False))
    check_config("demo", schema, {"k": 3, "x": 1, "on": True})
    with pytest.raises(OptionError) as err:
        check_config("demo", schema, {"k": True, "x": "a", "on": 1})
    assert set(err.value.problems) == {"k", "x", "on"}


def test_the_cli_refuses_a_bad_option_with_exit_status_2(tmp_path, capsys):
    rc = main(["align", "--method", "jaccard", "--input", str(DATA), "--output", str(tmp_path / "o.jsonl"),
               "--config", '{"partial_threshold": 1.5}'])
    assert rc == 2
    err = capsys.readouterr().err
    assert "partial_threshold: must be <= 1, got 1.5" in err and "valid:" in err
