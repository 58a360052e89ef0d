"""MUSS steps 3-4: the faiss index of the pool and the search for admissible neighbours
(Martin et al. 2022, §3.1, App. A.1; SPEC §5.7; the whole procedure is described in
:mod:`workers.engine.simplicity.muss_mining`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = ["PoolMeta", "SAME_DOCUMENT_MODES", "SameDocument", "blocked_counts", "build_index", "search_admissible"]

SameDocument = Literal["overlapping", "any", "keep"]
SAME_DOCUMENT_MODES: tuple[str, ...] = ("overlapping", "any", "keep")


def build_index(vectors: np.ndarray, exact_limit: int = 50_000, nprobe: int = 16, seed: int = 0):  # type: ignore[no-untyped-def]
    """A faiss inner-product index over unit vectors: flat when small, IVF+SQ8 when large."""
    import faiss

    x = np.ascontiguousarray(vectors, dtype=np.float32)
    n, d = x.shape
    if n <= exact_limit:
        index = faiss.IndexFlatIP(d)
    else:
        nlist = max(1, min(n // 39, int(4 * math.sqrt(n))))
        index = faiss.index_factory(d, f"IVF{nlist},SQ8", faiss.METRIC_INNER_PRODUCT)
        rng = np.random.default_rng(seed)
        sample = x[rng.choice(n, size=min(n, 256 * nlist), replace=False)]
        index.train(sample)
        index.nprobe = min(nprobe, nlist)
    index.add(x)
    return index


@dataclass(frozen=True)
class PoolMeta:
    """Integer views of the indexed pool: document code, first and end sentence of each sequence.

    Sequences of one document must be contiguous and ``doc`` non-decreasing (documents in order),
    which is how :func:`mine_paraphrases` and the corpus miner lay the pool out.
    """

    doc: np.ndarray
    start: np.ndarray
    end: np.ndarray

    def doc_bounds(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """First and one-past-last pool row of each document code."""
        return np.searchsorted(self.doc, codes, "left"), np.searchsorted(self.doc, codes, "right")


def blocked_counts(rows: np.ndarray, pool: PoolMeta, rule: SameDocument) -> np.ndarray:
    """How many pool sequences each query row (a pool row) may not be paired with, itself included.

    Example:
        >>> meta = PoolMeta(np.array([0, 0, 0, 1]), np.array([0, 0, 1, 0]), np.array([1, 2, 2, 1]))
        >>> blocked_counts(np.array([0, 2, 3]), meta, "overlapping").tolist()
        [2, 2, 1]
    """
    out = np.ones(len(rows), dtype=np.int64)
    if rule == "keep" or not len(rows):
        return out
    q_doc = pool.doc[rows]
    codes, inverse = np.unique(q_doc, return_inverse=True)
    lo, hi = pool.doc_bounds(codes)
    if rule == "any":
        return (hi - lo)[inverse].astype(np.int64)
    order = np.argsort(inverse, kind="stable")
    groups = np.flatnonzero(np.diff(inverse[order], prepend=-1, append=-1))
    for a, b in zip(groups[:-1], groups[1:]):
        members = order[a:b]
        g = inverse[members[0]]
        st, en = pool.start[lo[g]:hi[g]], pool.end[lo[g]:hi[g]]
        q_st, q_en = pool.start[rows[members]], pool.end[rows[members]]
        out[members] = ((st[None, :] < q_en[:, None]) & (q_st[:, None] < en[None, :])).sum(axis=1)
    return out


def search_admissible(
    index, q_arr: np.ndarray, rows: np.ndarray | None, pool: PoolMeta, k: int, rule: SameDocument,  # type: ignore[no-untyped-def]
) -> tuple[list[list[tuple[float, int]]], int]:
    """Each query's top-``k`` *admissible* neighbours ``[(squared L2 distance, pool row)]``.

    ``rows[i]`` is query ``i``'s own pool row when the pool queries itself (its own sequence and,
    by ``rule``, its same-document neighbours are skipped before the top-k is taken), or None for
    outside queries (nothing skipped). The index is searched for ``k`` + a capped surplus, then a
    second time only for the queries whose skipped neighbours crowded out the first pass.

    Returns:
        The neighbour lists and how many same-document neighbours (not the query itself) were
        skipped ahead of a query's k-th admissible neighbour.
    """
    n_pool = int(index.ntotal)
    n_q = len(q_arr)
    self_query = rows is not None
    n_blocked = blocked_counts(rows, pool, rule) if self_query else np.zeros(n_q, dtype=np.int64)
    rows_of: list[list[tuple[float, int]]] = [[] for _ in range(n_q)]
    if n_q == 0 or n_pool == 0:
        return rows_of, 0

    skipped_total = 0
    kk = min(n_pool, k + int(min(n_blocked.max(initial=0), max(4 * k, 32))))
    pending = np.arange(n_q)
    while len(pending):
        sims, ids = index.search(np.ascontiguousarray(q_arr[pending], dtype=np.float32), kk)
        dists = np.maximum(0.0, 2.0 - 2.0 * sims)
        blk = _blocked_mask(rows, pool, rule, pending, ids)
        ok = (ids >= 0) & ~blk
        rank = np.cumsum(ok, axis=1)  # admissible neighbours up to and including each slot
        take = ok & (rank <= k)
        # blocked neighbours that sat ahead of the k-th admissible one (the query itself not counted)
        own = rows[pending][:, None] if self_query else -1  # type: ignore[index]
        skipped = blk & (rank < k) & (ids != own)
        skipped_total += int(skipped.sum())
        got = take.sum(axis=1)
        exhausted = (ids < 0).any(axis=1)
        for r, qi in enumerate(pending):
            sel = take[r]
            rows_of[qi] = [(float(d), int(j)) for d, j in zip(dists[r][sel], ids[r][sel])]
        need = (got < k) & ~exhausted & (kk < np.minimum(n_pool, k + n_blocked[pending]))
        if not need.any() or kk >= n_pool:
            break
        # second pass, only for the queries whose blocked neighbours crowded out the first
        skipped_total -= int(skipped[need].sum())
        pending = pending[need]
        kk = min(n_pool, k + int(n_blocked[pending].max()))
    return rows_of, skipped_total


def _blocked_mask(
    rows: np.ndarray | None, pool: PoolMeta, rule: SameDocument, pending: np.ndarray, ids: np.ndarray,
) -> np.ndarray:
    """Which neighbour slots ``ids`` of the ``pending`` queries may not be paired with their query."""
    if rows is None:
        return np.zeros(ids.shape, dtype=bool)
    own = rows[pending]
    safe = np.where(ids < 0, 0, ids)
    mask = safe == own[:, None]
    if rule != "keep":
        same = pool.doc[safe] == pool.doc[own][:, None]
        if rule == "overlapping":
            same &= (pool.start[safe] < pool.end[own][:, None]) & (pool.start[own][:, None] < pool.end[safe])
        mask |= same
    return mask & (ids >= 0)
