"""Errors the client raises, each with the server's own message, one class per kind of refusal.

>>> issubclass(NotFound, AlignappError) and issubclass(Forbidden, AlignappError)
True
>>> issubclass(Forbidden, Unauthorized)  # a handler for a bad token must not swallow a refused role
False
>>> plain("job failed: annotation.services.corpus.importing.problems.CorpusImportError: bad.jsonl:2: not JSON")
'job failed: bad.jsonl:2: not JSON'
"""
from __future__ import annotations

import re
from typing import Any

#: A dotted Python class path (``package.module.ClassName:``) that a server message may carry.
CLASS_PATH = re.compile(r"\b(?:[a-z_][a-z0-9_]*\.)+[A-Z][A-Za-z0-9_]*(?:\.[A-Z][A-Za-z0-9_]*)*:\s*")


def plain(text: str) -> str:
    """``text`` without the server's internal class paths (``annotation.services....Error: ``)."""
    return CLASS_PATH.sub("", text)


class AlignappError(Exception):
    """The server refused a request or work failed; ``str(error)`` is the server's message.

    Attributes:
        status: the HTTP status (an int), or a run's or job's final status (``failed``, ``cancelled``).
        payload: the server's answer (a dict, or text).
    """

    def __init__(self, message: str, *, status: int | str | None = None, payload: Any = None) -> None:
        super().__init__(plain(message))
        self.status = status
        self.payload = payload

    @property
    def code(self) -> str | None:
        """The server's machine code for a refusal (``unknown_method``, ``invalid``, ...), when it sent one."""
        return self.payload.get("code") if isinstance(self.payload, dict) else None

    @property
    def problems(self) -> list[str]:
        """Each problem the server named: an import's ``file:line: field: message`` lines, else each
        field error as ``field: message``, else the message."""
        payload = self.payload if isinstance(self.payload, dict) else {}
        if payload.get("problems"):
            return [plain(str(p)) for p in payload["problems"]]
        result = payload.get("result") if isinstance(payload.get("result"), dict) else {}
        if result.get("problems"):
            return [plain(str(p)) for p in result["problems"]]
        fields = [f"{key}: {_joined(value)}" for key, value in payload.items() if key not in IGNORED]
        return fields or [str(self)]


class Unauthorized(AlignappError):
    """401: no token, or a wrong or rotated one (``Client.login`` gives a new one); from ``Client.login``,
    a wrong username or password."""


class Forbidden(AlignappError):
    """403: signed in, but the user's role may not do this (e.g. an annotator starting a run). Not an
    :class:`Unauthorized`: signing in again would not help."""


class NotFound(AlignappError):
    """404: no such project, run, job or export — or one the user is not a member of."""


class Invalid(AlignappError):
    """400, 409, 413: the server refused what was sent; ``problems`` lists why, one line each."""


class Unavailable(AlignappError):
    """The server did not answer (down, unreachable, 502/503/504) even after the client's retries."""


class OtherOrigin(AlignappError):
    """The server pointed the client (a list's ``next``, a job's ``status_url``, a download) at another
    origin (scheme, host, port) than the one the client was created with; nothing was sent there, so the
    token never leaves its server."""


class StillComputing(AlignappError):
    """The server was still computing the answer (``202 Accepted``, ``"status": "computing"``: a big project's first
    figures, which a background job computes) when the client's ``computing_timeout`` ran out; ``payload`` is its last
    answer (``job``: the job computing them)."""


class JobFailed(AlignappError):
    """A run, job or export ended ``failed`` or ``cancelled``; ``payload`` is its last state."""


IGNORED = ("detail", "problems", "limits", "status", "result", "id", "error", "message", "progress", "code")
BY_STATUS: dict[int, type[AlignappError]] = {401: Unauthorized, 403: Forbidden, 404: NotFound, 400: Invalid,
                                             409: Invalid, 413: Invalid, 422: Invalid, 502: Unavailable,
                                             503: Unavailable, 504: Unavailable}


def error_for(status: int, payload: Any, fallback: str) -> AlignappError:
    """The error of an HTTP answer ``status`` with the server's ``payload``."""
    return BY_STATUS.get(status, AlignappError)(message_of(payload, fallback), status=status, payload=payload)


def message_of(payload: Any, fallback: str) -> str:
    """The readable message of an error answer: ``detail``, then ``problems`` one per line, then any
    field errors as ``field: message``."""
    if isinstance(payload, str):  # an HTML error page says nothing the status does not
        text = payload.strip()
        return fallback if not text or text.startswith("<") else text[:2000]
    if not isinstance(payload, dict):
        return fallback
    lines = [str(payload["detail"])] if payload.get("detail") else []
    lines += [str(p) for p in payload.get("problems") or []]
    lines += [f"{key}: {_joined(value)}" for key, value in payload.items() if key not in ("detail", "problems", "limits", "code")]
    return "\n".join(lines) or fallback


def _joined(value: Any) -> str:
    return "; ".join(str(v) for v in value) if isinstance(value, list) else str(value)
