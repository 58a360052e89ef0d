"""Errors the client raises, each with the server's own message."""
from __future__ import annotations

from typing import Any


class AlignappError(Exception):
    """The server refused a request (``status`` is the HTTP status) or work failed; ``str(error)`` is
    the server's message (``detail``, each field's error, an import's problems one per line)."""

    def __init__(self, message: str, *, status: int | str | None = None, payload: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.payload = payload


class JobFailed(AlignappError):
    """A run, job or export ended ``failed`` or ``cancelled``; ``payload`` is its last state."""


def message_of(payload: Any, fallback: str) -> str:
    """The readable message of an error answer: ``detail``, then ``problems`` one per line, then any
    field errors as ``field: message``."""
    if isinstance(payload, str):
        return payload.strip() or fallback
    if not isinstance(payload, dict):
        return fallback
    lines = []
    if payload.get("detail"):
        lines.append(str(payload["detail"]))
    lines += [str(p) for p in payload.get("problems") or []]
    for key, value in payload.items():
        if key in ("detail", "problems", "limits"):
            continue
        if isinstance(value, list):
            value = "; ".join(str(v) for v in value)
        lines.append(f"{key}: {value}")
    return "\n".join(lines) or fallback
