"""What goes wrong in an import: located problems, collected before anything is written."""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from annotation.errors import DomainError

MAX_PROBLEMS = 50


def without_server_paths(text: str) -> str:
    """``text`` with the import folder (``IMPORT_DIR``) cut out: a staged upload's or work folder's
    path becomes the member's own name, so no refusal shows where the server keeps its files."""
    from django.conf import settings

    root = getattr(settings, "IMPORT_DIR", None)
    if not root or not text:
        return text
    for folder in sorted({str(Path(root)), str(Path(root).resolve())}, key=len, reverse=True):
        text = re.sub(re.escape(folder) + r"/(?:(?:work|upload)-[0-9a-f]+/)?(?:archive-\d+/)?", "", text)
        text = text.replace(folder, "the import folder")
    return text


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input, located as precisely as the format allows. ``limit`` names
    the setting (``IMPORT_MAX_LINES``...) when the input is refused for its size.

    Example:
        >>> str(Problem("a.jsonl", 3, "complex.paragraphs[0][1]", "must be a string, got int"))
        'a.jsonl:3: complex.paragraphs[0][1]: must be a string, got int'
    """

    file: str
    line: int | None
    field: str | None
    message: str
    limit: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "file", without_server_paths(self.file))
        object.__setattr__(self, "message", without_server_paths(self.message))

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where = f"{where}:{self.line}" if where else f"line {self.line}"
        parts = [p for p in (where, self.field) if p]
        return ": ".join([*parts, self.message])


class CorpusImportError(DomainError):
    """The import was refused; nothing was written. ``problems`` lists every problem found: 400, or
    413 when the input is over a size limit (``limits`` in the body names the settings)."""

    def __init__(self, problems: Problem | Iterable[Problem]) -> None:
        self.problems: list[Problem] = [problems] if isinstance(problems, Problem) else list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    @classmethod
    def one(cls, file: str, message: str, *, line: int | None = None, field: str | None = None,
            limit: str | None = None) -> CorpusImportError:
        return cls(Problem(file, line, field, message, limit))

    @property
    def too_large(self) -> bool:
        """The input was refused for its size (a limit setting), not for its content: HTTP 413."""
        return any(p.limit for p in self.problems)

    @property
    def status(self) -> int:  # type: ignore[override]
        return 413 if self.too_large else 400

    def payload(self) -> dict:
        body: dict = {"detail": "nothing was imported", "problems": [str(p) for p in self.problems]}
        limits = sorted({p.limit for p in self.problems if p.limit})
        if limits:
            body["limits"] = limits
        return body


class Problems:
    """Collects problems up to ``cap`` (the rest are counted, not kept)."""

    def __init__(self, cap: int = MAX_PROBLEMS) -> None:
        self.cap = cap
        self.items: list[Problem] = []
        self.dropped = 0

    def add(self, file: str, message: str, *, line: int | None = None, field: str | None = None,
            limit: str | None = None) -> None:
        if len(self.items) < self.cap:
            self.items.append(Problem(file, line, field, message, limit))
        else:
            self.dropped += 1

    @property
    def full(self) -> bool:
        return len(self.items) >= self.cap

    def __bool__(self) -> bool:
        return bool(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def raise_if_any(self) -> None:
        if not self.items:
            return
        problems = list(self.items)
        if self.dropped:
            problems.append(Problem("", None, None, f"... and {self.dropped} more problems not shown"))
        raise CorpusImportError(problems)
