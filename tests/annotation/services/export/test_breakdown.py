"""Where each gold policy's pairs come from (``export/breakdown.py``, the export preview's "by gold policy" table):
a record read under the widest policy as each other policy gives it, and the counts per policy and origin after
the export's filters."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from annotation.services.export import ExportOptions
from annotation.services.export import breakdown as b
from annotation.services.export.filters import FilterChain
from tests.annotation.services.export.formats.helpers import batch, record

COUNTS_AS = {"aligned": "aligned", "partial": "partial", "not-aligned": "not"}


def gold(value: str, provenance: str, stored: bool = False) -> SimpleNamespace:
    """What the gold reading gives a pair under one policy."""
    return SimpleNamespace(value=value, provenance=provenance, stored=stored)


def refined() -> object:
    """Imported aligned-or-partial gold refined by one vote: single under the widest policy, imported under
    majority and stored."""
    return record([0], [0], "partial", label="partial", provenance="single", by_policy={
        "majority-or-single": gold("partial", "single"), "majority": gold("aligned-or-partial", "imported", True),
        "stored": gold("aligned-or-partial", "imported", True)})


def test_a_record_is_given_as_each_policy_decides_it():
    r = refined()
    assert b.for_policy(r, "majority-or-single", COUNTS_AS) is r  # as read: the same record
    majority = b.for_policy(r, "majority", COUNTS_AS)
    assert (majority.label, majority.provenance, majority.stored_gold) == ("aligned-or-partial", "imported", True)
    assert majority.counts_as == "not"  # not a scheme value: no class
    assert b.for_policy(r, "majority", None).counts_as == "partial"  # no classes given: the record's
    unvoted = record([1], [2], by_policy={"majority-or-single": gold("aligned", "single")})
    assert b.for_policy(unvoted, "majority") is None  # that policy gives it no value
    plain = record([1], [2])
    assert b.for_policy(plain, "stored") is plain  # read under one policy only


def test_records_for_leave_out_what_a_policy_does_not_decide():
    kept, dropped = refined(), record([1], [2], provenance="single", by_policy={
        "majority-or-single": gold("aligned", "single")})
    widest = b.records_for(batch([kept, dropped]), "majority-or-single", derived=False, class_values={})
    assert widest == [kept, dropped] and widest[1] is dropped
    only = b.records_for(batch([kept, dropped]), "majority", derived=False, class_values={}, counts_as=COUNTS_AS)
    assert [r.pair_id for r in only] == [kept.pair_id]


@pytest.mark.django_db
def test_the_breakdown_counts_pairs_per_policy_and_origin_after_the_filters(project):
    chain = FilterChain(project, ExportOptions.parse({"provenance": ["single", "imported", "adjudicated"]}))
    table = b.PolicyBreakdown(chain, derived=False, class_values={}, counts_as=COUNTS_AS)
    majority_only = record([1], [2], provenance="majority", by_policy={
        "majority-or-single": gold("aligned", "majority"), "majority": gold("aligned", "majority")})
    table.add(batch([refined(), majority_only]))
    out = table.as_dict()
    assert set(out) == {"majority-or-single", "majority", "stored"}
    assert out["majority-or-single"] == {"pairs": 1, "from": {o: int(o == "single") for o in b.ORIGINS}}
    assert out["majority"]["pairs"] == 1 and out["majority"]["from"]["imported"] == 1  # the majority pair filtered
    assert out["stored"]["from"]["imported"] == 1 and list(out["stored"]["from"])[:len(b.ORIGINS)] == list(b.ORIGINS)
