"""Where each gold policy's pairs come from: the export preview's "by gold policy" table (issue 18:
"its preview shows per policy how many pairs come from imports, adjudication, majority and single
votes").

The preview reads the gold once under the widest policy (``majority-or-single``, derivation off) and
sorts each pair into the policies that admit it: stored gold (an Adjudication row: ``imported``,
``adjudicated``, or ``majority`` / ``single`` written by automatic gold) is in every policy, a
majority computed from the votes in ``majority`` and ``majority-or-single``, a single vote only in
``majority-or-single``. Each policy then derives its own non-adjacent-level pairs and runs the same
filters, so its row matches what an export with that policy would write.

Example:
    >>> from types import SimpleNamespace as R
    >>> admitted(R(stored_gold=False, provenance="single"), "majority"), admitted(R(stored_gold=True, provenance="single"), "stored")
    (False, True)
"""
from __future__ import annotations

from collections import Counter

from annotation.services.export import derived as derive
from annotation.services.export.filters import FilterChain
from annotation.services.export.options import LABEL_POLICIES
from annotation.services.export.records import ArticleBatch, PairRecord

WIDEST = "majority-or-single"
ORIGINS = ("imported", "adjudicated", "majority", "single", "derived")


def admitted(record: PairRecord, policy: str) -> bool:
    """Whether ``policy`` exports ``record`` (a gold record read under :data:`WIDEST`)."""
    if record.stored_gold or policy == WIDEST:
        return True
    return policy == "majority" and record.provenance == "majority"


def records_for(batch: ArticleBatch, policy: str, *, derived: bool, class_values: dict[str, str]) -> list[PairRecord]:
    """The pairs of one article an export with ``policy`` would consider (before the filters)."""
    base = [r for r in batch.records if admitted(r, policy)]
    if derived and base:
        base = base + derive.compose(base, batch.documents, class_values)
    return base


class PolicyBreakdown:
    """Pairs per gold policy and where they come from (``add`` one article at a time)."""

    def __init__(self, chain: FilterChain, *, derived: bool, class_values: dict[str, str]) -> None:
        self.chain, self.derived, self.class_values = chain, derived, class_values
        self.counts: dict[str, Counter] = {p: Counter() for p in LABEL_POLICIES}

    def add(self, batch: ArticleBatch) -> None:
        for policy, counts in self.counts.items():
            for r in records_for(batch, policy, derived=self.derived, class_values=self.class_values):
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


__all__ = ["ORIGINS", "WIDEST", "PolicyBreakdown", "admitted", "records_for"]
