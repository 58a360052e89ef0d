"""Helpers shared by the engine's CLI commands (:mod:`workers.engine.cli`,
:mod:`workers.engine.mining_cli`): the ``--config`` parser and the progress printer.

Example:
    >>> parse_config('{"k": 4}')
    {'k': 4}
"""
from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

from .errors import EngineInputError
from .options import Option

__all__ = ["config_help", "parse_config", "Progress"]


def config_help(what: str, schema: Iterable[Option]) -> str:
    """``--config``'s help: the options of ``schema`` with their types, ranges and defaults.

    Example:
        >>> config_help("mining", (Option("k", "int", 8, min=1),))
        'mining options as a JSON object (or @file): k (int >= 1, default 8)'
    """
    return f"{what} options as a JSON object (or @file): " + "; ".join(o.describe() for o in schema)


def parse_config(text: str | None) -> dict[str, Any]:
    """``--config``: a JSON object, or ``@file`` holding one; ``None``/empty = ``{}``.

    Raises:
        EngineInputError: unreadable file, invalid JSON, or not an object.
    """
    if not text:
        return {}
    if text.startswith("@"):
        try:
            with open(text[1:], encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise EngineInputError(f"cannot read config file: {exc.strerror}",
                                   source=text[1:]) from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EngineInputError(f"--config is not valid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(value, dict):
        raise EngineInputError("--config must be a JSON object")
    return value


class Progress:
    """A ``progress(fraction, message)`` callback printing a line per 5% (and the last) to ``stream``."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.last = -1.0
        self.t0 = time.perf_counter()

    def __call__(self, frac: float, msg: str) -> None:
        if frac >= 1.0 or frac - self.last >= 0.05:
            self.last = frac
            print(f"[{100 * frac:5.1f}% {time.perf_counter() - self.t0:7.1f}s] {msg}",
                  file=self.stream, flush=True)
