"""The four stages of a corpus mining job (MUSS §3.1, App. A.1): encode, index, search, merge.

* **encode** (one chunk per shard): unit-length embeddings of the shard's sequences, by the
  engine's sentence encoder (MUSS: LASER, PCA to 512 before SQ8; here MiniLM's 384 dimensions).
* **index** (one chunk): faiss ``IndexFlatIP`` up to ``exact_limit`` sequences, else
  ``IVF{nlist},SQ8`` trained on a random sample drawn shard by shard (App. A.1).
* **search** (one chunk per shard): each query's ``k`` nearest admissible neighbours, kept when
  within the distance bound, the margin, not near-identical or contained, not from the same
  document and not in the evaluation set (§3.1, A.1; :mod:`workers.engine.simplicity.muss_mining`).
* **merge** (one chunk): symmetric duplicates dropped, each pair oriented by Flesch Reading Ease.
"""
from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..simplicity.muss_mining import filter_candidates, search_admissible
from .folder import STAGES, STAT_KEYS, JobFolder, atomic_json, atomic_write, worker_name
from .records import CorpusPair, MinedSide

__all__ = ["MiningWork"]


def _fres(text: str, language: str) -> float:
    from ..simplicity.readability import FRES_COEFFICIENTS, fres

    return fres(text, language if language in FRES_COEFFICIENTS else "en")


class MiningWork(JobFolder):
    """A mining job in a folder (see :mod:`workers.engine.mining` for the files and stages).

    Create it once with :meth:`create` (idempotent: an existing job is opened), then run
    :meth:`run_chunk` for every chunk of :meth:`missing` of :meth:`current_stage` until it is
    None; :meth:`pairs` reads the result.
    """

    # -- chunks ----------------------------------------------------------------------------

    def run_chunk(self, stage: str, chunk: int = 0, encoder: Any = None) -> bool:
        """Run one chunk unless its output exists; True when it did the work.

        ``encoder`` (encode only): an object with ``encode(texts)``; None = the engine's cached
        encoder for the job's model.
        """
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r}; choose one of: {', '.join(STAGES)}")
        if chunk not in self.chunks(stage):
            raise ValueError(f"stage {stage} has no chunk {chunk} (it has {len(self.chunks(stage))})")
        if self.is_done(stage, chunk):
            return False
        for before in STAGES[: STAGES.index(stage)]:
            if self.missing(before):
                raise RuntimeError(f"stage {stage} cannot run before stage {before} is complete")
        if stage == "encode":
            self._encode(chunk, encoder)
        elif stage == "index":
            self._build_index()
        elif stage == "search":
            self._search(chunk)
        else:
            self._merge()
        return True

    def _finish(self, stage: str, chunk: int, t0: float, write: Callable[[Path], None], **info: Any) -> dict[str, Any]:
        """Write the sidecar, then the output (atomically): the output marks the chunk done."""
        info = {"seconds": round(time.perf_counter() - t0, 4), "worker": worker_name(), **info}
        atomic_json(self._sidecar(stage, chunk), info)
        write(self.output(stage, chunk))
        return info

    def _encode(self, shard: int, encoder: Any) -> dict[str, Any]:
        t0 = time.perf_counter()
        if encoder is None:
            from ..simplicity.embedding import default_encoder

            encoder = default_encoder(self.model, self.config.device)
        texts = [self.text(r) for r in self.shard_rows(shard)]
        encode = getattr(encoder, "encode_uncached", None) or encoder.encode
        vecs = np.ascontiguousarray(encode(texts), dtype=np.float32)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        vecs /= np.maximum(norms, 1e-12)
        return self._finish("encode", shard, t0, lambda p: atomic_write(p, lambda fh: np.save(fh, vecs)),
                            rows=len(texts), dim=int(vecs.shape[1]) if vecs.ndim == 2 else 0)

    def _build_index(self) -> dict[str, Any]:
        import faiss

        t0 = time.perf_counter()
        shards = range(self.n_shards)
        dim = int(np.load(self.output("encode", 0), mmap_mode="r").shape[1])
        nlist = self.plan.get("nlist")
        train_s = 0.0
        if nlist is None:
            index = faiss.IndexFlatIP(dim)
        else:
            index = faiss.index_factory(dim, f"IVF{nlist},SQ8", faiss.METRIC_INNER_PRODUCT)
            # a random training sample drawn shard by shard (never the whole corpus in memory)
            rng = np.random.default_rng(self.config.seed)
            want = min(self.n_sequences, 256 * nlist)
            share = want / self.n_sequences
            parts = []
            for s in shards:
                v = np.load(self.output("encode", s), mmap_mode="r")
                take = rng.random(len(v)) < share
                parts.append(np.asarray(v[take], dtype=np.float32))
            t1 = time.perf_counter()
            index.train(np.ascontiguousarray(np.concatenate(parts)))
            train_s = time.perf_counter() - t1
            faiss.extract_index_ivf(index).nprobe = int(self.plan["nprobe"])
        for s in shards:
            index.add(np.ascontiguousarray(self.vectors(s)))

        def write(path: Path) -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
            try:
                faiss.write_index(index, str(tmp))
                os.replace(tmp, path)
            finally:
                if tmp.exists():
                    tmp.unlink()

        return self._finish("index", 0, t0, write, index=self.plan["index"], ntotal=int(index.ntotal),
                            train_seconds=round(train_s, 3))

    def _search(self, shard: int) -> dict[str, Any]:
        t0 = time.perf_counter()
        cfg = self.config
        rows = np.arange(self.shard_rows(shard).start, self.shard_rows(shard).stop, dtype=np.int64)
        stats = dict.fromkeys(STAT_KEYS, 0)
        rule = cfg.same_document if cfg.exclude_same_document_first else "keep"
        rows_of, skipped = search_admissible(self.index(), self.vectors(shard), rows, self._pool_meta(), cfg.k, rule)  # type: ignore[arg-type]
        t_search = time.perf_counter() - t0
        if cfg.exclude_same_document_first:
            stats["same_document"] += skipped
        seq = self.sequences

        def post_blocked(qi: int, j: int) -> bool:
            q = rows[qi]
            if seq[q, 0] != seq[j, 0]:
                return False
            return cfg.same_document == "any" or (
                cfg.same_document == "overlapping" and seq[q, 1] < seq[j, 2] and seq[j, 1] < seq[q, 2])

        passed = list(filter_candidates(
            rows_of, [self.text(int(r)) for r in rows], self.text, stats,
            max_distance=cfg.max_distance, max_relative=cfg.max_relative, min_change=cfg.min_change,
            blocked=None if cfg.exclude_same_document_first else post_blocked,
            in_evaluation_set=(lambda qi, j: self._in_evaluation_set(int(rows[qi])) or self._in_evaluation_set(j))
            if cfg.evaluation_set else None,
        ))
        q = np.array([rows[qi] for qi, _, _, _ in passed], dtype=np.int64)
        c = np.array([j for _, j, _, _ in passed], dtype=np.int64)
        dist = np.array([d for _, _, d, _ in passed], dtype=np.float32)
        rel = np.array([r for _, _, _, r in passed], dtype=np.float32)
        return self._finish("search", shard, t0, lambda p: atomic_write(
            p, lambda fh: np.savez(fh, query=q, neighbour=c, distance=dist, relative=rel)),
            rows=len(rows), search_seconds=round(t_search, 4), stats=stats)

    def _merge(self) -> dict[str, Any]:
        t0 = time.perf_counter()
        stats = self.stats(include_merge=False)
        seen: set[tuple[int, int]] = set()
        found: list[tuple[int, int, float, float]] = []
        for shard in range(self.n_shards):
            with np.load(self.output("search", shard)) as z:
                for q, c, d, r in zip(z["query"].tolist(), z["neighbour"].tolist(), z["distance"].tolist(),
                                      z["relative"].tolist()):
                    key = (q, c) if q <= c else (c, q)
                    if key in seen:
                        stats["duplicate"] += 1
                        stats["kept"] -= 1
                        continue
                    seen.add(key)
                    found.append((q, c, d, r))
        pairs = [self._orient(q, c, d, r) for q, c, d, r in found]
        pairs.sort(key=lambda p: (-p[0], p[1]))
        lines = []
        for n, (score, _, complex_side, simple_side, features) in enumerate(pairs, start=1):
            pair = CorpusPair(f"m{n}", score, complex_side, simple_side, features)
            lines.append(json.dumps(pair.to_dict(with_features=True), ensure_ascii=False))
        payload = ("\n".join(lines) + "\n" if lines else "").encode("utf-8")
        return self._finish("merge", 0, t0, lambda p: atomic_write(p, lambda fh: fh.write(payload)),
                            pairs=len(lines), duplicate=stats["duplicate"])

    def _side(self, row: int) -> MinedSide:
        d, s, e = (int(x) for x in self.sequences[row])
        return MinedSide(self.documents[d].id, tuple(range(s, e)), self.text(row))

    def _orient(self, q: int, c: int, d: float, r: float) -> tuple[float, tuple, MinedSide, MinedSide, dict]:
        a, b = self._side(q), self._side(c)
        lang_a = self.documents[int(self.sequences[q, 0])].language
        lang_b = self.documents[int(self.sequences[c, 0])].language
        fa, fb = _fres(a.text, lang_a), _fres(b.text, lang_b)
        # higher FRES reads more simply; ties: the shorter text, then the query, is complex
        if (fa, -len(a.text)) > (fb, -len(b.text)):
            a, b, fa, fb = b, a, fb, fa
        score = 1.0 - d / 2.0
        features = {"l2_distance": d, "relative_distance": r, "fres_complex": fa, "fres_simple": fb}
        return score, (a.document, a.sentences, b.document, b.sentences), a, b, features
