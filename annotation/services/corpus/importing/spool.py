"""Parsed articles between validation and writing: pickled to a temporary file (in memory while small)."""
from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterator
from pathlib import Path

from annotation.services.corpus.importing.base import ParsedArticle

SPOOL_MEMORY = 16 * 1024 * 1024  # parsed articles are kept in memory up to this size, then on disk


class Spool:
    """Parsed articles between validation and writing: pickled to a temporary file (in memory while small)."""

    def __init__(self, folder: Path) -> None:
        self.file = tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY, dir=folder)
        self.count = 0

    def add(self, article: ParsedArticle) -> None:
        pickle.dump(article, self.file, protocol=pickle.HIGHEST_PROTOCOL)
        self.count += 1

    def __iter__(self) -> Iterator[ParsedArticle]:
        self.file.seek(0)
        for _ in range(self.count):
            yield pickle.load(self.file)  # noqa: S301 - our own spool, written just above

    def close(self) -> None:
        self.file.close()
