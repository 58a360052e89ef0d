"""Alignments across non-adjacent levels, derived by composing adjacent-level ones (CRF paper §3.1:
Newsela annotators align levels 0–1, 1–2, …; 0–2, 0–3, … "can then be derived automatically").

Within one article, documents are ordered by rank. A pair A (levels i → j) and an adjacent-level
pair B (j → j+1) compose when A's simple sentences and B's complex sentences share a sentence:
the derived pair links A's complex sentences to B's simple sentences (levels i → j+1). Only pairs
that count as aligned or partial compose; the derived label is *aligned* when both parts are
aligned, else *partial*. Chains go as far as the levels do (0–1 ∘ 1–2 = 0–2, 0–2 ∘ 2–3 = 0–3).
A derived pair identical to one already present between the same documents (an annotated or
model pair, whatever its label) is not added: direct judgements win. Derived pairs have
``provenance="derived"``, ``derived=True`` and ``derived_from`` = the pairs composed.
"""
from __future__ import annotations

from collections import defaultdict

from annotation.services.export.records import PairRecord

LINKING = ("aligned", "partial")


def compose(records: list[PairRecord], documents: dict[int, dict], class_values: dict[str, str]) -> list[PairRecord]:
    """The derived pairs of one article.

    Args:
        records: the article's pairs with labels (any levels).
        documents: document id → {"level", "rank", ...} for every document of the article.
        class_values: class → the label to give derived pairs of that class (the scheme's first
            value counting as it; the class name itself for auto exports).
    """
    order = sorted(documents, key=lambda d: (documents[d]["rank"], documents[d]["level"]))
    if len(order) < 3:
        return []
    position = {doc: k for k, doc in enumerate(order)}
    by_docs: dict[tuple[int, int], list[PairRecord]] = defaultdict(list)
    present: set[tuple[int, int, tuple, tuple]] = set()
    for r in records:
        present.add((r.complex_document, r.simple_document, r.complex_ids, r.simple_ids))
        if r.counts_as in LINKING and r.complex_document in position and r.simple_document in position:
            by_docs[(r.complex_document, r.simple_document)].append(r)
    derived: list[PairRecord] = []
    for start in range(len(order) - 2):
        chain = by_docs.get((order[start], order[start + 1]), [])
        for middle in range(start + 1, len(order) - 1):
            step = by_docs.get((order[middle], order[middle + 1]), [])
            by_complex: dict[int, list[PairRecord]] = defaultdict(list)
            for b in step:
                for i in b.complex_ids:
                    by_complex[i].append(b)
            made: dict[tuple, PairRecord] = {}
            for a in chain:
                seen: set[int] = set()
                for i in a.simple_ids:
                    for b in by_complex.get(i, ()):
                        if id(b) in seen:
                            continue
                        seen.add(id(b))
                        key = (a.complex_ids, b.simple_ids)
                        klass = "aligned" if a.counts_as == b.counts_as == "aligned" else "partial"
                        sources = _sources(a) + _sources(b)
                        existing = made.get(key)
                        if existing is not None:
                            if klass == "aligned" and existing.counts_as != "aligned":
                                existing.counts_as, existing.label = "aligned", class_values.get("aligned", "aligned")
                            existing.derived_from = sorted(set(existing.derived_from) | set(sources))
                            continue
                        made[key] = _derived(a, b, klass, class_values, sources)
            chain = list(made.values())
            end = order[middle + 1]
            for r in chain:
                if (r.complex_document, end, r.complex_ids, r.simple_ids) not in present:
                    derived.append(r)
    return derived


def _sources(r: PairRecord) -> list[int]:
    return list(r.derived_from) if r.derived else ([r.pair_id] if r.pair_id is not None else [])


def _derived(a: PairRecord, b: PairRecord, klass: str, class_values: dict[str, str], sources: list[int]) -> PairRecord:
    scores = [s for s in (a.score, b.score) if s is not None]
    return PairRecord(
        pair_id=None, article_id=a.article_id, article=a.article, split=a.split,
        complex_level=a.complex_level, simple_level=b.simple_level, complex_rank=a.complex_rank,
        simple_rank=b.simple_rank, complex_document=a.complex_document, simple_document=b.simple_document,
        complex_ids=a.complex_ids, simple_ids=b.simple_ids, complex_sentences=a.complex_sentences,
        simple_sentences=b.simple_sentences, label=class_values.get(klass, klass), counts_as=klass,
        provenance="derived", score=min(scores) if scores else None, origin="derived", derived=True,
        derived_from=sorted(set(sources)),
    )
