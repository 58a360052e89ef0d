"""Exceptions raised by the engine.

Callers (the CLI, the Django importer, Celery tasks) catch :class:`EngineError` to turn failures
into messages; everything else is a bug.
"""
from __future__ import annotations


class EngineError(Exception):
    """Base class of every error the engine raises on purpose."""


class EngineInputError(EngineError, ValueError):
    """Malformed input: says which file, line and field are wrong.

    Example:
        >>> str(EngineInputError("'complex' is missing", source="in.jsonl", line=3, field="complex"))
        "in.jsonl:3: field 'complex': 'complex' is missing"
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.field = field
        where = ""
        if source is not None:
            where = f"{source}:{line}: " if line is not None else f"{source}: "
        elif line is not None:
            where = f"line {line}: "
        if field is not None:
            where += f"field {field!r}: "
        super().__init__(where + message)

