"""The job folder of a corpus mining job: plan, file layout, data and results.

Every output is written to a temporary name and renamed into place (:func:`atomic_write`), so a
file that exists is complete; a chunk whose output exists is done. The stages that write the
outputs are in :mod:`workers.engine.mining.work`; the folder's files are listed in
:mod:`workers.engine.mining`.
"""
from __future__ import annotations

import json
import math
import os
import socket
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import fields
from pathlib import Path
from typing import IO, Any, Self

import numpy as np

from ..simplicity.muss_mining import PoolMeta, _norm, extract_sequences, is_noisy
from .config import MiningConfig
from .records import CorpusDocument, CorpusPair

__all__ = ["STAGES", "STAT_KEYS", "JobFolder", "atomic_write", "atomic_json", "worker_name"]

STAGES: tuple[str, ...] = ("encode", "index", "search", "merge")
"""The chunked stages, in order (the plan is made when the job is created)."""


def atomic_write(path: Path, write: Callable[[IO[bytes]], None]) -> None:
    """Write ``path`` via a unique temporary name in the same folder, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def atomic_json(path: Path, value: Any) -> None:
    atomic_write(path, lambda fh: fh.write(json.dumps(value, ensure_ascii=False).encode("utf-8")))


def worker_name() -> str:
    """Who ran a chunk: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


STAT_KEYS = ("sequences", "noisy", "candidates", "too_far", "margin", "near_identical", "contained",
             "same_document", "evaluation_set", "duplicate", "kept")


class JobFolder:
    """A mining job's folder: its plan, file layout, data and results.

    :class:`~workers.engine.mining.work.MiningWork` adds the stages that write the files.
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        plan_path = self.folder / "plan.json"
        if not plan_path.exists():
            raise FileNotFoundError(str(plan_path))
        self.plan: dict[str, Any] = json.loads(plan_path.read_text(encoding="utf-8"))
        known = {f.name for f in fields(MiningConfig)}  # a job planned by another version may have more keys
        self.config = MiningConfig.from_dict({k: v for k, v in self.plan["config"].items() if k in known})
        self.model: str | None = self.plan.get("model")
        self._documents: list[CorpusDocument] | None = None
        self._sequences: np.ndarray | None = None
        self._index: Any = None
        self._eval: set[str] | None = None

    # -- creation --------------------------------------------------------------------------

    @staticmethod
    def exists(folder: str | Path) -> bool:
        return (Path(folder) / "plan.json").exists()

    @classmethod
    def create(cls, folder: str | Path, documents: Iterable[CorpusDocument], config: MiningConfig,
               model: str | None = None) -> Self:
        """Plan a job: documents → sequences (noisy ones dropped) → shards. Opens it if it exists."""
        folder = Path(folder)
        if cls.exists(folder):
            return cls(folder)
        t0 = time.perf_counter()
        folder.mkdir(parents=True, exist_ok=True)
        rows: list[tuple[int, int, int]] = []
        n_all = noisy = 0
        n_docs = n_sentences = 0
        lines = []
        for d_index, doc in enumerate(documents):
            lines.append(json.dumps({"id": doc.id, "language": doc.language, "sentences": list(doc.sentences)},
                                    ensure_ascii=False))
            n_docs += 1
            n_sentences += len(doc.sentences)
            for s in extract_sequences(doc.id, doc.sentences, config.max_chars):
                n_all += 1
                if is_noisy(s.text, config.max_punctuation):
                    noisy += 1
                else:
                    rows.append((d_index, s.start, s.end))
        seq = np.array(rows, dtype=np.int64).reshape(-1, 3)
        atomic_write(folder / "documents.jsonl", lambda fh: fh.write(("\n".join(lines) + "\n").encode("utf-8")))
        atomic_write(folder / "sequences.npy", lambda fh: np.save(fh, seq))
        n = len(seq)
        exact = n <= config.exact_limit
        nlist = None if exact else (config.nlist or max(1, min(n // 39, int(4 * math.sqrt(n)))))
        plan = {
            "config": config.to_dict(), "model": model, "documents": n_docs, "sentences": n_sentences,
            "sequences": n, "sequences_extracted": n_all, "noisy": noisy,
            "shard_size": config.shard_size, "shards": max(1, math.ceil(n / config.shard_size)) if n else 0,
            "index": "IndexFlatIP" if exact else f"IVF{nlist},SQ8", "nlist": nlist,
            "nprobe": None if exact else min(config.nprobe, nlist or 1),
            "plan_seconds": round(time.perf_counter() - t0, 3), "planned_by": worker_name(),
        }
        atomic_json(folder / "plan.json", plan)
        return cls(folder)

    # -- layout ----------------------------------------------------------------------------

    @property
    def n_sequences(self) -> int:
        return int(self.plan["sequences"])

    @property
    def n_shards(self) -> int:
        return int(self.plan["shards"])

    def shard_rows(self, shard: int) -> range:
        size = int(self.plan["shard_size"])
        return range(shard * size, min(self.n_sequences, (shard + 1) * size))

    def chunks(self, stage: str) -> list[int]:
        """The chunk numbers of ``stage`` (shards for encode/search; one chunk, 0, otherwise)."""
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r}; choose one of: {', '.join(STAGES)}")
        if stage in ("encode", "search"):
            return list(range(self.n_shards))
        return [0]

    def output(self, stage: str, chunk: int = 0) -> Path:
        """The file whose existence marks the chunk done."""
        return {
            "encode": self.folder / "vectors" / f"{chunk:05d}.npy",
            "index": self.folder / "index.faiss",
            "search": self.folder / "candidates" / f"{chunk:05d}.npz",
            "merge": self.folder / "pairs.jsonl",
        }[stage]

    def _sidecar(self, stage: str, chunk: int = 0) -> Path:
        out = self.output(stage, chunk)
        return out.with_name(out.name.split(".")[0] + f".{stage}.json")

    def is_done(self, stage: str, chunk: int = 0) -> bool:
        if stage == "index" and self.n_sequences == 0:
            return True
        return self.output(stage, chunk).exists()

    def missing(self, stage: str) -> list[int]:
        return [c for c in self.chunks(stage) if not self.is_done(stage, c)]

    def current_stage(self) -> str | None:
        """The first stage with a missing chunk (its chunks can run in parallel); None when done."""
        for stage in STAGES:
            if self.missing(stage):
                return stage
        return None

    # -- data ------------------------------------------------------------------------------

    @property
    def documents(self) -> list[CorpusDocument]:
        if self._documents is None:
            with open(self.folder / "documents.jsonl", encoding="utf-8") as fh:
                self._documents = [CorpusDocument(r["id"], tuple(r["sentences"]), r["language"])
                                   for r in map(json.loads, fh) if r]
        return self._documents

    @property
    def sequences(self) -> np.ndarray:
        """``[n, 3]`` int64: document position, first sentence, end sentence (exclusive)."""
        if self._sequences is None:
            self._sequences = np.load(self.folder / "sequences.npy")
        return self._sequences

    def text(self, row: int) -> str:
        d, s, e = self.sequences[row]
        return " ".join(self.documents[d].sentences[s:e])

    def _pool_meta(self) -> PoolMeta:
        seq = self.sequences
        return PoolMeta(seq[:, 0], seq[:, 1], seq[:, 2])

    def _in_evaluation_set(self, row: int) -> bool:
        if self._eval is None:
            self._eval = {_norm(t) for t in self.config.evaluation_set}
        if not self._eval:
            return False
        d, s, e = self.sequences[row]
        return _norm(self.text(row)) in self._eval or any(
            _norm(t) in self._eval for t in self.documents[d].sentences[s:e])

    def vectors(self, shard: int) -> np.ndarray:
        return np.load(self.output("encode", shard))

    def index(self) -> Any:
        """The faiss index (read once per job object; IVF nprobe set from the plan)."""
        if self._index is None:
            import faiss

            index = faiss.read_index(str(self.output("index")))
            if self.plan.get("nprobe"):
                faiss.extract_index_ivf(index).nprobe = int(self.plan["nprobe"])
            self._index = index
        return self._index

    # -- results ---------------------------------------------------------------------------

    def pairs(self, start: int = 0, stop: int | None = None) -> Iterator[CorpusPair]:
        """The mined pairs (after the merge), best first; ``start``/``stop`` slice them (lines
        outside the slice are not parsed)."""
        with open(self.output("merge"), encoding="utf-8") as fh:
            for n, line in enumerate(fh):
                if stop is not None and n >= stop:
                    return
                if n >= start and line.strip():
                    yield CorpusPair.from_dict(json.loads(line))

    def n_pairs(self) -> int:
        return int(self.chunk_info("merge").get("pairs", 0)) if self.is_done("merge") else 0

    def chunk_info(self, stage: str, chunk: int = 0) -> dict[str, Any]:
        path = self._sidecar(stage, chunk)
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() and self.is_done(stage, chunk) else {}

    def stats(self, *, include_merge: bool = True) -> dict[str, int]:
        """Counts as :func:`~workers.engine.simplicity.muss_mining.mine_paraphrases` reports them."""
        stats = dict.fromkeys(STAT_KEYS, 0)
        stats["sequences"] = int(self.plan["sequences_extracted"])
        stats["noisy"] = int(self.plan["noisy"])
        for shard in range(self.n_shards):
            for key, v in self.chunk_info("search", shard).get("stats", {}).items():
                if key not in ("sequences", "noisy"):
                    stats[key] += int(v)
        if include_merge and self.is_done("merge"):
            dup = int(self.chunk_info("merge").get("duplicate", 0))
            stats["duplicate"] += dup
            stats["kept"] -= dup
        return stats

    def timings(self) -> dict[str, Any]:
        """Per stage: chunks done, summed chunk seconds, and which workers ran them."""
        out: dict[str, Any] = {"plan": {"chunks": 1, "seconds": self.plan.get("plan_seconds", 0.0),
                                        "workers": [self.plan.get("planned_by")]}}
        for stage in STAGES:
            infos = [self.chunk_info(stage, c) for c in self.chunks(stage) if self.is_done(stage, c)]
            infos = [i for i in infos if i]
            out[stage] = {"chunks": len(infos), "seconds": round(sum(i.get("seconds", 0.0) for i in infos), 3),
                          "workers": sorted({i.get("worker", "") for i in infos})}
        return out

    def remove_intermediates(self) -> None:
        """Delete the embeddings and the index (the bulk of the folder) once the pairs are merged."""
        if not self.is_done("merge"):
            return
        for path in [*self.folder.glob("vectors/*.npy"), self.output("index")]:
            path.unlink(missing_ok=True)
