"""MUSS paraphrase mining (Martin et al. 2022, §3.1, App. A.1; SPEC §5.7).

1. **Sequences**: every run of adjacent sentences of a document whose joined text is at most
   ``max_chars`` (300) characters: [s1], [s1,s2], …, [s2], [s2,s3], …
2. **Noise**: drop sequences with more than 10% punctuation characters. (MUSS also drops
   sequences a kenlm 3-gram LM finds improbable; no LM is available offline, so that filter is
   left out.)
3. **Index** unit-length embeddings with faiss: exact ``IndexFlatIP`` up to
   ``exact_limit`` sequences (default 20,000, see :class:`~workers.engine.mining.MiningConfig`), else
   ``IVF{nlist},SQ8`` (8-bit scalar quantisation as in A.1, nlist ≈ 4√N, nprobe 16).
4. **Query** each sequence for its top-``k`` (8) neighbours; distances are squared L2 between unit
   vectors (= 2 − 2·cosine). When the pool queries itself, the query's own sequence and the
   neighbours it may not be paired with (same document: its overlapping windows, or any sequence of
   the document with ``same_document="any"``) are **excluded before the top-k is taken**: the
   index is searched for ``k`` + the number of such sequences (a first pass with a capped surplus,
   a second pass only for the queries that need more), they are dropped, and the top-``k`` of the
   rest are the candidates. Otherwise a sequence's own overlapping windows — its nearest vectors by
   construction — fill the k slots and the margin compares a genuine cross-document paraphrase
   with near-duplicates of the query, rejecting it. Keep a candidate when its distance ≤
   ``max_distance`` and its *relative distance* (distance / mean distance of the query's top-k
   candidates, the margin criterion of A.1, Artetxe & Schwenk 2019) ≤ ``max_relative`` (0.6).
   MUSS's 0.05 bound is for compressed LASER vectors; for the default MiniLM we use 0.5
   (cosine ≥ 0.75). Both are parameters.

   Note: the reference implementation (facebookresearch/muss, ``get_candidate_pair_ids``)
   computes the margin on the raw top-8 — the query itself and its same-document windows
   included — and only afterwards drops pairs whose sequence ids are ≤ 10 apart. The paper lists
   the same-document rule among the post-filters; ``exclude_same_document_first=False``
   reproduces that order (same-document pairs then counted under ``same_document`` after the
   margin). The default excludes first, because otherwise recall on cross-document paraphrases
   collapses on any corpus whose documents yield many overlapping sequences.
5. **Filter** the candidates that pass both bounds, in the order of §3.1: near-identical pairs
   (case-insensitive character Levenshtein distance < 20% of the longer text), containment (one
   inside the other, case-insensitive), then sequences in an evaluation set (exact match, or any of
   their sentences, after lowercasing and whitespace normalisation). Symmetric duplicates are
   reported once. ``same_document="keep"`` excludes only the query itself.

Counts (``stats``): ``sequences``, ``noisy``; ``same_document`` = same-document/overlapping
neighbours skipped while filling a query's k candidate slots (or, with
``exclude_same_document_first=False``, candidates dropped after the margin); ``candidates`` =
top-k neighbours examined; then ``too_far``, ``margin``, ``near_identical``, ``contained``,
``evaluation_set``, ``duplicate`` and ``kept`` partition the candidates (minus ``same_document``
in the post-filter order).
"""
from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from rapidfuzz.distance import Levenshtein

from .embedding import Encoder, default_encoder
from .muss_index import PoolMeta, SameDocument, blocked_counts, build_index, search_admissible

if TYPE_CHECKING:
    from ..mining.config import MiningConfig

__all__ = [
    "MinedPair",
    "PoolMeta",
    "Sequence_",
    "blocked_counts",
    "build_index",
    "contained",
    "extract_sequences",
    "filter_candidates",
    "is_noisy",
    "mine_paraphrases",
    "near_identical",
    "punctuation_ratio",
    "search_admissible",
]

_STAT_KEYS = ("sequences", "noisy", "candidates", "too_far", "margin", "near_identical", "contained",
              "same_document", "evaluation_set", "duplicate", "kept")


@dataclass(frozen=True)
class Sequence_:
    """A run of adjacent sentences ``[start, end)`` of document ``doc``."""

    doc: str
    start: int
    end: int
    text: str

    def overlaps(self, other: Sequence_) -> bool:
        return self.doc == other.doc and self.start < other.end and other.start < self.end


@dataclass(frozen=True)
class MinedPair:
    """A mined paraphrase: query sequence, neighbour sequence and their distances."""

    query: Sequence_
    neighbour: Sequence_
    distance: float
    relative_distance: float

    @property
    def cosine(self) -> float:
        return 1.0 - self.distance / 2.0


def extract_sequences(doc: str, sentences: Sequence[str], max_chars: int = 300) -> list[Sequence_]:
    """All runs of adjacent sentences whose space-joined text has ≤ ``max_chars`` characters.

    Example:
        >>> [(s.start, s.end) for s in extract_sequences("d", ["a" * 10, "b" * 10, "c" * 300], 25)]
        [(0, 1), (0, 2), (1, 2)]
    """
    out = []
    for i in range(len(sentences)):
        text = ""
        for j in range(i, len(sentences)):
            text = sentences[j] if j == i else f"{text} {sentences[j]}"
            if len(text) > max_chars:
                break
            if text.strip():
                out.append(Sequence_(doc, i, j + 1, text))
    return out


def punctuation_ratio(text: str) -> float:
    """Share of non-space characters that are Unicode punctuation."""
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return 0.0
    return sum(1 for c in chars if unicodedata.category(c).startswith("P")) / len(chars)


def is_noisy(text: str, max_punctuation: float = 0.10) -> bool:
    """MUSS's noise rule: more than 10% punctuation characters."""
    return punctuation_ratio(text) > max_punctuation


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def near_identical(a: str, b: str, min_change: float = 0.20) -> bool:
    """Case-insensitive character Levenshtein distance below ``min_change`` × the longer length."""
    a, b = a.lower(), b.lower()
    longest = max(len(a), len(b))
    return longest == 0 or Levenshtein.distance(a, b) < min_change * longest


def contained(a: str, b: str) -> bool:
    a, b = _norm(a), _norm(b)
    return a in b or b in a


def mine_paraphrases(
    documents: Mapping[str, Sequence[str]],
    options: MiningConfig | None = None,
    *,
    encoder: Encoder | None = None,
    model: str | None = None,
    queries: Mapping[str, Sequence[str]] | None = None,
) -> tuple[list[MinedPair], dict[str, int]]:
    """Mine paraphrase pairs from a pool of documents (``{doc_id: sentences}``).

    Args:
        documents: the pool indexed with faiss.
        options: the mining options, parsed once by their caller from the one schema
            (:data:`~workers.engine.mining.config.MINING_PARAMS`, ``MiningConfig.from_dict``: an unknown
            key or a bad value is refused there); None = the defaults. Read here: ``max_chars``,
            ``max_punctuation``, ``k``, ``max_distance``, ``max_relative``, ``min_change``,
            ``same_document`` (only with ``queries=None``: separate query documents are never the
            pool's documents), ``exclude_same_document_first`` (drop same-document neighbours before
            the top-k and the margin rather than after them, the reference code's order),
            ``evaluation_set`` (texts, sentences or sequences, that must not appear in a mined pair)
            and ``exact_limit``.
        queries: documents whose sequences query the index; None = the pool itself (MUSS).

    Returns:
        Kept pairs (best first per query) and counts of sequences/candidates and of each filter.
    """
    if options is None:
        from ..mining.config import MiningConfig

        options = MiningConfig()
    o = options
    stats = dict.fromkeys(_STAT_KEYS, 0)
    evalset = {_norm(t) for t in o.evaluation_set}
    # Steps 1-2: sequences, noise filter.
    pool = _collect_sequences(documents, o.max_chars, o.max_punctuation, stats)
    qseqs = pool if queries is None else _collect_sequences(queries, o.max_chars, o.max_punctuation, stats)
    if not pool or not qseqs:
        return [], stats
    self_query = queries is None
    exclude_first = self_query and o.exclude_same_document_first
    # Steps 3-4: index, query ("keep": only the query itself is excluded before the top-k).
    rows_of, skipped = _embed_and_search(
        encoder or default_encoder(model), pool, qseqs, self_query=self_query, k=o.k, exact_limit=o.exact_limit,
        block_rule=o.same_document if exclude_first else "keep")
    if exclude_first:
        stats["same_document"] += skipped
    # Step 5: filters, in the order of §3.1.
    passed = filter_candidates(
        rows_of, [q.text for q in qseqs], lambda j: pool[j].text, stats,
        max_distance=o.max_distance, max_relative=o.max_relative, min_change=o.min_change,
        blocked=None if exclude_first else _same_document_test(qseqs, pool, self_query, o.same_document),
        in_evaluation_set=_evaluation_set_test(evalset, qseqs, queries or documents, pool, documents),
    )
    return _drop_symmetric_duplicates(passed, qseqs, pool, symmetric=self_query, stats=stats), stats


def _same_document_test(
    qseqs: list[Sequence_], pool: list[Sequence_], self_query: bool, same_document: SameDocument,
) -> Callable[[int, int], bool]:
    """Post-filter form of the same-document rule (``exclude_same_document_first=False``)."""
    def blocked(qi: int, j: int) -> bool:
        q, c = qseqs[qi], pool[j]
        return self_query and q.doc == c.doc and (
            same_document == "any" or (same_document == "overlapping" and q.overlaps(c)))
    return blocked


def _evaluation_set_test(
    evalset: set[str], qseqs: list[Sequence_], q_docs: Mapping[str, Sequence[str]], pool: list[Sequence_],
    documents: Mapping[str, Sequence[str]],
) -> Callable[[int, int], bool] | None:
    """Whether a pair's query or neighbour (or one of its sentences) is in the evaluation set; None if empty."""
    if not evalset:
        return None

    def in_eval(s: Sequence_, docs: Mapping[str, Sequence[str]]) -> bool:
        return _norm(s.text) in evalset or any(_norm(t) in evalset for t in docs[s.doc][s.start : s.end])
    return lambda qi, j: in_eval(qseqs[qi], q_docs) or in_eval(pool[j], documents)


def _collect_sequences(
    docs: Mapping[str, Sequence[str]], max_chars: int, max_punctuation: float, stats: dict[str, int],
) -> list[Sequence_]:
    """Steps 1-2: every document's sequences, the noisy ones counted and dropped."""
    seqs = []
    for doc_id, sents in docs.items():
        for s in extract_sequences(str(doc_id), sents, max_chars):
            stats["sequences"] += 1
            if is_noisy(s.text, max_punctuation):
                stats["noisy"] += 1
            else:
                seqs.append(s)
    return seqs


def _embed_and_search(  # type: ignore[no-untyped-def]
    enc: Encoder, pool: list[Sequence_], qseqs: list[Sequence_], *, self_query: bool, k: int, exact_limit: int,
    block_rule: SameDocument,
) -> tuple[list[list[tuple[float, int]]], int]:
    """Steps 3-4: embed, index the pool and query it (see :func:`search_admissible`)."""
    pool_vec = enc.encode([s.text for s in pool])
    q_vec = pool_vec if self_query else enc.encode([s.text for s in qseqs])
    index = build_index(pool_vec, exact_limit)
    q_arr = np.ascontiguousarray(q_vec, dtype=np.float32)
    # Integer views of the pool for vectorised same-document tests.
    doc_codes: dict[str, int] = {}
    p_doc = np.array([doc_codes.setdefault(s.doc, len(doc_codes)) for s in pool], dtype=np.int64)
    p_start = np.array([s.start for s in pool], dtype=np.int64)
    p_end = np.array([s.end for s in pool], dtype=np.int64)
    return search_admissible(
        index, q_arr, np.arange(len(qseqs)) if self_query else None, PoolMeta(p_doc, p_start, p_end), k, block_rule)


def _drop_symmetric_duplicates(
    passed: Iterable[tuple[int, int, float, float]], qseqs: list[Sequence_], pool: list[Sequence_], *,
    symmetric: bool, stats: dict[str, int],
) -> list[MinedPair]:
    """The passing pairs as :class:`MinedPair`, a pair found from both sides (``symmetric``) reported once."""
    seen: set[tuple[tuple[str, int, int], tuple[str, int, int]]] = set()
    kept: list[MinedPair] = []
    for qi, j, d, rel in passed:
        q, c = qseqs[qi], pool[j]
        key_q, key_c = (q.doc, q.start, q.end), (c.doc, c.start, c.end)
        key = (key_q, key_c) if not symmetric or key_q <= key_c else (key_c, key_q)
        if key in seen:
            stats["duplicate"] += 1
            stats["kept"] -= 1
            continue
        seen.add(key)
        kept.append(MinedPair(q, c, d, rel))
    return kept


def filter_candidates(
    rows_of: Sequence[Sequence[tuple[float, int]]],
    q_texts: Sequence[str],
    pool_text: Callable[[int], str],
    stats: dict[str, int],
    *,
    max_distance: float,
    max_relative: float,
    min_change: float,
    blocked: Callable[[int, int], bool] | None = None,
    in_evaluation_set: Callable[[int, int], bool] | None = None,
) -> Iterator[tuple[int, int, float, float]]:
    """The criteria of §3.1/A.1 in order: distance bound, margin (relative distance to the mean of
    the query's candidates), [same document, post-filter order], near-identical, containment,
    evaluation set. Yields ``(query, pool row, distance, relative distance)`` of the pairs that pass
    and counts every candidate in ``stats`` (``kept`` for those yielded)."""
    for qi, row in enumerate(rows_of):
        if not row:
            continue
        mean_d = sum(d for d, _ in row) / len(row)
        q_text = q_texts[qi]
        for d, j in row:
            stats["candidates"] += 1
            rel = d / mean_d if mean_d > 0 else 0.0
            if d > max_distance:
                stats["too_far"] += 1
            elif len(row) > 1 and rel > max_relative:
                stats["margin"] += 1
            elif blocked is not None and blocked(qi, j):
                stats["same_document"] += 1
            elif near_identical(q_text, c_text := pool_text(j), min_change):
                stats["near_identical"] += 1
            elif contained(q_text, c_text):
                stats["contained"] += 1
            elif in_evaluation_set is not None and in_evaluation_set(qi, j):
                stats["evaluation_set"] += 1
            else:
                stats["kept"] += 1
                yield qi, j, d, rel
