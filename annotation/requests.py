"""A command's request, parsed once at the edge: the one way an API view, a page form, a management command or
a job turns its raw options into the typed object that services take.

Each command declares its options once as the engine's :class:`~workers.engine.options.Option` schema (type,
range, default, help, and ``clean`` for a value the type alone does not describe) and a frozen dataclass with a
field per option; :func:`parse_request` checks a raw dict against the schema (every problem at once) and
builds the object. Forms and the API schema read the same declarations, so nothing else validates options.

Example:
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Demo:
    ...     k: int = 8
    >>> parse_request(Demo, "demo", (Option("k", "int", 8, min=1),), {"k": "3"}, text=True)
    Demo(k=3)
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from annotation.errors import DomainError
from workers.engine import Option, OptionError, build_config, from_text

__all__ = ["BadOptions", "Option", "json_schema", "parse_request"]

_JSON_TYPES = {"float": "number", "int": "integer", "bool": "boolean", "str": "string", "path": "string",
               "object": "object", "list": "array", "json": None}

R = TypeVar("R")


class BadOptions(DomainError, ValueError):
    """A request's options refused: ``problems`` maps each bad option to why (all of them at once); the body
    names each under ``problems`` and the message lists the valid options."""

    code = "invalid"

    def __init__(self, message: str, problems: Mapping[str, str]) -> None:
        self.problems = dict(problems)
        super().__init__(message)

    @classmethod
    def of(cls, exc: OptionError) -> BadOptions:
        return cls(str(exc), exc.problems)

    def payload(self) -> dict:
        return {**super().payload(), "problems": dict(self.problems)}


def parse_request(cls: Callable[..., R], what: str, schema: Iterable[Option], raw: Mapping[str, Any] | None, *,
                  text: bool = False, error: Callable[[OptionError], Exception] = BadOptions.of) -> R:
    """``cls`` built from ``raw`` checked against ``schema`` (defaults for what is absent); ``text``: the values
    are a form's, a query string's or flags' text, converted to each option's type first.

    Raises:
        BadOptions: (or what ``error`` makes of the :class:`OptionError`) every unknown key and bad value.
    """
    schema = tuple(schema)
    values = dict(raw or {})
    if text:
        values = from_text(schema, values)
    try:
        return build_config(cls, what, schema, values)
    except OptionError as exc:
        raise error(exc) from exc


def json_schema(schema: Iterable[Option]) -> dict[str, dict]:
    """The OpenAPI properties of ``schema``'s options (type, enum, range, default, help): the API schema reads the
    same declarations as the parser."""
    out: dict[str, dict] = {}
    for o in schema:
        prop: dict[str, Any] = {"description": o.help}
        if _JSON_TYPES[o.type]:  # a json option: any JSON value, as its help says
            prop["type"] = _JSON_TYPES[o.type]
        if o.default is not None:
            prop["default"] = o.default
        if o.choices:
            prop["enum"] = list(o.choices)
        if o.min is not None:
            prop["minimum"] = o.min
        if o.max is not None:
            prop["maximum"] = o.max
        if o.nullable:
            prop["nullable"] = True
        out[o.name] = prop
    return out
