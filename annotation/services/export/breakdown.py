"""Where each gold policy's pairs come from: the export preview's "by gold policy" table (issue 18:
"its preview shows per policy how many pairs come from imports, adjudication, majority and single
votes").

The preview reads the gold once under the widest policy (``majority-or-single``, derivation off)
and every other policy (the record's ``by_policy``: what the one gold reading,
:mod:`annotation.services.review.gold_reading`, gives the pair under each policy, completions'
implied nots included): e.g. imported gold refined by a single vote is ``single`` under the widest
policy and ``imported`` under ``majority`` and ``stored``. Each policy then derives its own
non-adjacent-level pairs and runs the same filters, so its row matches what an export with that
policy would write.

Example:
    >>> from types import SimpleNamespace as R
    >>> imported = R(stored=("aligned-or-partial", "imported"), votes=[{"value": "partial"}])
    >>> [for_policy(imported, p).provenance for p in ("majority-or-single", "majority")]  # doctest: +SKIP
    ['single', 'imported']
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

from annotation.services.export import derived as derive
from annotation.services.export import source
from annotation.services.export.filters import FilterChain
from annotation.services.export.options import LABEL_POLICIES
from annotation.services.export.records import ArticleBatch, PairRecord

WIDEST = "majority-or-single"
ORIGINS = ("imported", "adjudicated", "majority", "single", "tie", "derived")


def for_policy(record: PairRecord, policy: str, counts_as: dict[str, str] | None = None) -> PairRecord | None:
    """``record`` (a gold record read under :data:`WIDEST`) as an export with ``policy`` would write
    it, or None when that policy gives it no value."""
    if record.by_policy is None:  # read under one policy only: as read
        return record
    decided = record.by_policy.get(policy)
    if decided is None:
        return None
    if decided.value == record.label and decided.provenance == record.provenance:
        return record
    klass = source.class_of(decided.value, counts_as or {}) if counts_as is not None else record.counts_as
    return replace(record, label=decided.value, provenance=decided.provenance, counts_as=klass,
                   stored_gold=decided.stored)


def records_for(batch: ArticleBatch, policy: str, *, derived: bool, class_values: dict[str, str],
                counts_as: dict[str, str] | None = None) -> list[PairRecord]:
    """The pairs of one article an export with ``policy`` would consider (before the filters)."""
    base = [r for r in (for_policy(record, policy, counts_as) for record in batch.records) if r is not None]
    if derived and base:
        base = base + derive.compose(base, batch.documents, class_values)
    return base


class PolicyBreakdown:
    """Pairs per gold policy and where they come from (``add`` one article at a time)."""

    def __init__(self, chain: FilterChain, *, derived: bool, class_values: dict[str, str],
                 counts_as: dict[str, str] | None = None) -> None:
        self.chain, self.derived, self.class_values, self.counts_as = chain, derived, class_values, counts_as
        self.counts: dict[str, Counter] = {p: Counter() for p in LABEL_POLICIES}

    def add(self, batch: ArticleBatch) -> None:
        for policy, counts in self.counts.items():
            for r in records_for(batch, policy, derived=self.derived, class_values=self.class_values,
                                 counts_as=self.counts_as):
                if self.chain.keeps(r):
                    counts["pairs"] += 1
                    counts[r.provenance] += 1

    def as_dict(self) -> dict[str, dict]:
        """``{policy: {"pairs": n, "from": {imported, adjudicated, majority, single, derived, ...}}}``."""
        out = {}
        for policy, counts in self.counts.items():
            origins = {o: counts[o] for o in ORIGINS}
            origins.update({k: n for k, n in sorted(counts.items()) if k not in origins and k != "pairs"})
            out[policy] = {"pairs": counts["pairs"], "from": origins}
        return out


__all__ = ["ORIGINS", "WIDEST", "PolicyBreakdown", "for_policy", "records_for"]
