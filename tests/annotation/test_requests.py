"""``annotation.requests``: a command's options parsed once from their declarations."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from annotation.requests import BadOptions, Option, json_schema, parse_request

SCHEMA = (
    Option("k", "int", 8, min=1, max=20, help="neighbours"),
    Option("mode", "str", "fast", choices=("fast", "exact"), help="how"),
    Option("band", "list", None, nullable=True, clean=lambda v: [float(x) for x in v], help="a band"),
    Option("on", "bool", False, help="switch"),
)


@dataclass(frozen=True)
class Demo:
    k: int = 8
    mode: str = "fast"
    band: list | None = None
    on: bool = False


def test_absent_options_take_their_declared_defaults():
    assert parse_request(Demo, "demo", SCHEMA, None) == Demo()


def test_text_values_are_converted_to_the_declared_types_and_blank_means_the_default():
    parsed = parse_request(Demo, "demo", SCHEMA, {"k": " 12 ", "mode": "", "band": "0.1, 0.9", "on": "on"}, text=True)
    assert parsed == Demo(k=12, mode="fast", band=[0.1, 0.9], on=True)


def test_every_bad_value_is_refused_at_once_naming_each_option():
    with pytest.raises(BadOptions) as refused:
        parse_request(Demo, "demo", SCHEMA, {"k": "0", "mode": "slow", "colour": "red", "on": "maybe"}, text=True)
    assert refused.value.problems == {"k": "must be >= 1, got 0", "mode": "unknown mode 'slow'; choose one of: fast, exact",
                                      "colour": "unknown option", "on": "must be a bool, got 'maybe'"}
    assert refused.value.status == 400 and refused.value.payload()["problems"]["k"] == "must be >= 1, got 0"
    assert "valid: k (int in [1, 20], default 8)" in str(refused.value)


def test_a_clean_function_refuses_with_its_own_message():
    with pytest.raises(BadOptions) as refused:
        parse_request(Demo, "demo", SCHEMA, {"band": ["low"]})
    assert refused.value.problems == {"band": "could not convert string to float: 'low'"}


def test_the_api_schema_is_read_from_the_same_declarations():
    props = json_schema(SCHEMA)
    assert props["k"] == {"type": "integer", "description": "neighbours", "default": 8, "minimum": 1, "maximum": 20}
    assert props["mode"]["enum"] == ["fast", "exact"] and props["band"]["nullable"] is True
