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


def test_a_config_class_takes_its_fields_from_its_option_schema():
    from dataclasses import dataclass, fields

    from workers.engine.crf.model import CRF_PARAMS, CRFConfig
    from workers.engine.methods.crf_config import PARAMS as CRF_METHOD_PARAMS
    from workers.engine.methods.crf_config import CRFAlignerConfig
    from workers.engine.mining.config import MINING_PARAMS, MiningConfig
    from workers.engine.options import Option, option_fields
    from workers.engine.training_config import TRAIN_PARAMS, TrainConfig

    @dataclass
    @option_fields((Option("k", "int", 8), Option("names", "list", ["a"]), Option("seed", "int", 0)))
    class Demo:
        names: tuple[str, ...] = ()  # its own declaration, at the option's place
        extra: str = "x"

    assert [f.name for f in fields(Demo)] == ["k", "names", "seed", "extra"]
    assert Demo() == Demo(k=8, names=(), seed=0, extra="x")
    a, b = (dataclass(option_fields((Option("names", "list", ["a"]),))(type("Lists", (), {})))() for _ in range(2))
    a.names.append("b")
    assert b.names == ["a"]  # a mutable default is copied per instance
    for cls, schema in ((MiningConfig, MINING_PARAMS), (TrainConfig, TRAIN_PARAMS), (CRFConfig, CRF_PARAMS),
                        (CRFAlignerConfig, CRF_METHOD_PARAMS)):
        assert [f.name for f in fields(cls)] == [o.name for o in schema], cls
        assert {f.name: getattr(cls(), f.name) for f in fields(cls)} == {
            o.name: tuple(o.default) if cls is MiningConfig and o.type == "list" else o.default for o in schema}


def test_an_object_option_with_nested_options_checks_them_and_keeps_the_value_as_given():
    inner = (Option("epochs", "int", 2, min=1), Option("lr", "float", 0.1, min=0.0))
    schema = (Option("config", "object", None, nullable=True, options=inner),)
    given = {"epochs": 3}
    assert check_config("train", schema, {"config": given})["config"] is given  # a check, not a conversion
    with pytest.raises(OptionError) as refused:
        check_config("train", schema, {"config": {"epochs": 0, "nope": 1}})
    assert refused.value.problems == {"config": "epochs: must be >= 1, got 0; nope: unknown option"}
