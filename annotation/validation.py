"""What every value from outside must be before the app keeps it or looks anything up with it.

One set of rules for the JSON parser of the API (:mod:`annotation.parsers`), the form and query
guard of the pages (:mod:`annotation.middleware`), label writes (``services.review.labelling``) and
imports:

* **Text** holds no NUL character (PostgreSQL refuses it in text and jsonb) and no lone surrogate
  (it cannot be encoded as UTF-8: SQLite would store it and every later answer that contains it
  would fail to render).
* **Numbers** are finite (``1e999``, ``NaN`` and ``Infinity`` are not JSON and jsonb refuses them)
  and integers fit a signed 64-bit column (ids, counts; larger ones overflow SQLite's INTEGER).

>>> text_problem("caf\\u00e9")
>>> text_problem("a\\x00b")
'contains a NUL character'
>>> json_problem({"ratings": {"fluency": ["\\ud800"]}})
'ratings.fluency[0]: is not valid Unicode (a lone surrogate)'
>>> json_problem([1, 2**63])
'[1]: integer out of range (at most 64 bits: -9223372036854775808 to 9223372036854775807)'
"""
from __future__ import annotations

import math
from typing import Any

MIN_INT = -(2**63)
MAX_INT = 2**63 - 1
MAX_ID = MAX_INT
#: deeper JSON than this is refused (nothing the app takes nests more than a few levels)
MAX_DEPTH = 64


class InputError(ValueError):
    """A value from outside breaks the rules above (the message names where and why)."""

    def __init__(self, message: str, *, field: str = "detail", reason: str = "") -> None:
        super().__init__(message)
        self.field, self.reason = field, reason or message


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be stored as text, or None when it can."""
    if "\x00" in value:
        return "contains a NUL character"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode (a lone surrogate)"
    return None


def int_in_range(value: int) -> bool:
    return MIN_INT <= value <= MAX_INT


def number_problem(value: int | float) -> str | None:
    """Why a number cannot be stored, or None when it can (booleans are fine)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and not int_in_range(value):
        return f"integer out of range (at most 64 bits: {MIN_INT} to {MAX_INT})"
    if isinstance(value, float) and not math.isfinite(value):
        return "number out of range (not finite)"
    return None


def _where(path: tuple) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "body"


def first_problem(data: Any) -> tuple[tuple, str] | None:
    """``(path, why)`` of the first problem in a parsed JSON value (keys included), or None."""
    stack: list[tuple[tuple, Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if len(path) > MAX_DEPTH:
            return path[:MAX_DEPTH], f"nested deeper than {MAX_DEPTH} levels"
        problem = None
        if isinstance(value, str):
            problem = text_problem(value)
        elif isinstance(value, (int, float)):
            problem = number_problem(value)
        elif isinstance(value, dict):
            for key in value:
                key_problem = text_problem(key) if isinstance(key, str) else None
                if key_problem:
                    shown = key.encode("utf-8", "backslashreplace").decode("utf-8", "replace")
                    return path, f"key {shown!r} {key_problem}"
            stack.extend(((*path, key), item) for key, item in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend(((*path, i), item) for i, item in reversed(list(enumerate(value))))
        if problem:
            return path, problem
    return None


def json_problem(data: Any) -> str | None:
    """The first problem in a parsed JSON value (keys included) as ``"<path>: <why>"``, or None."""
    found = first_problem(data)
    return None if found is None else f"{_where(found[0])}: {found[1]}"


def problem_error(found: tuple[tuple, str], what: str) -> InputError:
    """The :class:`InputError` of :func:`first_problem`'s finding in a value named ``what`` (``"body"``: a request's
    body, named by its top-level key)."""
    path, why = found
    where = _where(path) if what == "body" else _where((what, *path))
    if what != "body":
        field = what
    else:  # the top-level key, as a serializer would name the field
        field = path[0] if path and isinstance(path[0], str) else "detail"
    return InputError(f"{where}: {why}", field=field, reason=f"{where}: {why}")


def check_text(name: str, value: str) -> None:
    """:class:`InputError` naming ``name`` unless ``value`` can be stored as text (a check: the caller keeps its value)."""
    problem = text_problem(value)
    if problem:
        raise InputError(f"{name}: {problem}", field=name, reason=problem)


def parse_id(name: str, raw: str) -> int:
    """A query or form value as an integer that fits a 64-bit column; InputError otherwise."""
    text = raw.strip()
    if len(text) > 25:
        raise InputError(f"{name}: must be an integer, got {raw[:30]!r}…")
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"{name}: must be an integer, got {raw!r}") from None
    if not int_in_range(value):
        raise InputError(f"{name}: {number_problem(value)}")
    return value
