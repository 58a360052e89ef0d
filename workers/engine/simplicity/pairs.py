"""Sentence pairs for the pair-level tools (SPEC §4: ``{"id", "complex", "simple", "refs"}``)."""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import EngineInputError

__all__ = ["TextPair", "read_pairs", "write_jsonl"]


@dataclass(frozen=True)
class TextPair:
    """A complex text and its (candidate) simplification, with optional reference simplifications."""

    complex: str
    simple: str
    refs: tuple[str, ...] = ()
    id: str = ""
    extra: dict[str, object] = field(default_factory=dict, compare=False)


def _parse(obj: object, source: str, line: int) -> TextPair:
    if not isinstance(obj, dict):
        raise EngineInputError("expected a JSON object", source=source, line=line)
    for key in ("complex", "simple"):
        if not isinstance(obj.get(key), str):
            raise EngineInputError(f"{key!r} must be a string", source=source, line=line, field=key)
    refs = obj.get("refs", [])
    if isinstance(refs, str) or not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        raise EngineInputError("'refs' must be a list of strings", source=source, line=line, field="refs")
    extra = {k: v for k, v in obj.items() if k not in ("id", "complex", "simple", "refs")}
    return TextPair(obj["complex"], obj["simple"], tuple(refs), str(obj.get("id", line)), extra)


def read_pairs(path: str | Path) -> Iterator[TextPair]:
    """Stream pairs from a JSONL file; blank lines are skipped.

    Raises:
        EngineInputError: a line is not valid JSON or lacks ``complex``/``simple`` strings.
    """
    from ..io import _iter_json  # the engine's one JSONL reader (line numbers, bad JSON, not UTF-8)

    for obj, name, line in _iter_json(path):
        yield _parse(obj, name, line)


def write_jsonl(path: str | Path, rows: Iterable[dict[str, object]]) -> int:
    """Write one JSON object per line (UTF-8, not ASCII-escaped); returns the number of lines."""
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    return n
