"""A bounded on-disk cache of sentence embeddings, shared by every process that opens the same folder.

One SQLite file per encoder identity (the model's resolved path and its files' sizes and times, so a
model retrained in place gets a new file), keyed by the SHA-1 of the normalised sentence text (NFC,
whitespace collapsed). SQLite in WAL mode lets many worker processes read and add at once; on several
machines put the folder on a shared volume, or each machine keeps its own. The file holds at most
``max_rows`` embeddings: when an insert passes it, the oldest rows (first in, first out) go.
"""
from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import threading
import unicodedata
from collections.abc import Sequence
from pathlib import Path

import numpy as np

__all__ = ["EmbeddingStore", "encoder_identity", "normalise"]

_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """The cache key's text: Unicode NFC, runs of whitespace as one space, trimmed."""
    return _SPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()


def encoder_identity(model_path: str) -> str:
    """A short hash naming the encoder: its path and, for a local folder, its files' sizes and times."""
    parts = [str(model_path)]
    folder = Path(model_path)
    if folder.is_dir():
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            if entry.is_file():
                st = entry.stat()
                parts.append(f"{entry.name}:{st.st_size}:{int(st.st_mtime)}")
    return hashlib.sha1("\n".join(parts).encode()).hexdigest()[:20]


def _key(text: str) -> bytes:
    return hashlib.sha1(normalise(text).encode("utf-8")).digest()


class EmbeddingStore:
    """``get(texts)`` → {text: vector} for those stored; ``put(texts, vectors)`` adds (ignores known ones)."""

    def __init__(self, folder: str | Path, identity: str, dimension: int, max_rows: int = 2_000_000) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / f"{identity}-{dimension}.sqlite3"
        self.dimension = dimension
        self.max_rows = max_rows
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), timeout=60, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS emb (id INTEGER PRIMARY KEY AUTOINCREMENT, k BLOB UNIQUE NOT NULL, v BLOB NOT NULL)")
        self.hits = 0
        self.misses = 0

    def get(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        keys = {_key(t): t for t in texts}
        found: dict[str, np.ndarray] = {}
        items = list(keys)
        with self._lock:
            for start in range(0, len(items), 500):
                part = items[start:start + 500]
                rows = self._db.execute(f"SELECT k, v FROM emb WHERE k IN ({','.join('?' * len(part))})", part).fetchall()
                for k, v in rows:
                    found[keys[bytes(k)]] = np.frombuffer(v, dtype=np.float32).copy()
        found = {t: v for t, v in found.items() if v.shape[0] == self.dimension}
        self.hits += len(found)
        self.misses += len(keys) - len(found)
        return found

    def put(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        if self.max_rows <= 0 or not len(texts):
            return
        rows = [(_key(t), np.asarray(v, dtype=np.float32).tobytes()) for t, v in zip(texts, vectors)]
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany("INSERT OR IGNORE INTO emb (k, v) VALUES (?, ?)", rows)
                top = self._db.execute("SELECT max(id) FROM emb").fetchone()[0] or 0
                if top > self.max_rows:  # ids only grow: drop the oldest beyond the bound
                    self._db.execute("DELETE FROM emb WHERE id <= ?", (top - self.max_rows,))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
