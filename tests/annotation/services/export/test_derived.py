from __future__ import annotations

import pytest

from annotation.services.export.derived import compose
from annotation.services.export.records import PairRecord

from .helpers import all_pairs, run

pytestmark = pytest.mark.django_db

DOCS = {10: {"level": "0", "rank": 0}, 11: {"level": "1", "rank": 1}, 12: {"level": "2", "rank": 2},
        13: {"level": "3", "rank": 3}}
VALUES = {"aligned": "aligned", "partial": "partial"}


def rec(pid, c_doc, s_doc, c_ids, s_ids, klass="aligned"):
    return PairRecord(pair_id=pid, article_id=1, article="A", split="train", complex_level=DOCS[c_doc]["level"],
                      simple_level=DOCS[s_doc]["level"], complex_rank=DOCS[c_doc]["rank"], simple_rank=DOCS[s_doc]["rank"],
                      complex_document=c_doc, simple_document=s_doc, complex_ids=tuple(c_ids), simple_ids=tuple(s_ids),
                      complex_sentences=[f"c{i}" for i in c_ids], simple_sentences=[f"s{i}" for i in s_ids],
                      label=klass, counts_as=klass, provenance="adjudicated")


def shape(records):
    return sorted((r.complex_level, r.simple_level, r.complex_ids, r.simple_ids, r.counts_as, tuple(r.derived_from))
                  for r in records)


def test_adjacent_alignments_compose_into_every_non_adjacent_level_pair():
    records = [rec(1, 10, 11, [0], [0]), rec(2, 11, 12, [0], [0]), rec(3, 12, 13, [0], [1])]
    assert shape(compose(records, DOCS, VALUES)) == [
        ("0", "2", (0,), (0,), "aligned", (1, 2)),
        ("0", "3", (0,), (1,), "aligned", (1, 2, 3)),
        ("1", "3", (0,), (1,), "aligned", (2, 3)),
    ]


def test_a_partial_link_makes_the_derived_pair_partial_and_not_aligned_ones_do_not_compose():
    records = [rec(1, 10, 11, [0], [0], "partial"), rec(2, 11, 12, [0], [0]),
               rec(3, 10, 11, [1], [1], "not"), rec(4, 11, 12, [1], [1])]
    assert shape(compose(records, DOCS, VALUES)) == [("0", "2", (0,), (0,), "partial", (1, 2))]


def test_splits_and_merges_compose_through_shared_sentences():
    # C0 split into M0+M1; M0 and M1 each simplified to S0 and S1
    records = [rec(1, 10, 11, [0], [0, 1]), rec(2, 11, 12, [0], [0]), rec(3, 11, 12, [1], [1])]
    assert shape(compose(records, DOCS, VALUES)) == [("0", "2", (0,), (0,), "aligned", (1, 2)),
                                                     ("0", "2", (0,), (1,), "aligned", (1, 3))]


def test_a_direct_judgement_between_the_same_sentences_wins_over_a_derived_one():
    records = [rec(1, 10, 11, [0], [0]), rec(2, 11, 12, [0], [0]), rec(9, 10, 12, [0], [0], "not")]
    assert compose(records, DOCS, VALUES) == []


def test_two_level_articles_derive_nothing():
    assert compose([rec(1, 10, 11, [0], [0])], {10: DOCS[10], 11: DOCS[11]}, VALUES) == []


def test_exported_derived_pairs_are_marked_and_can_be_switched_off(newsela, settings, tmp_path):
    _, root = run(newsela["project"], settings, tmp_path)
    derived = [r for r in all_pairs(root) if r["derived"]]
    assert {(r["complex_level"], r["simple_level"]) for r in derived} == {("0", "2")}
    assert all(r["provenance"] == "derived" and r["pair"] is None and r["derived_from"] for r in derived)
    _, root = run(newsela["project"], settings, tmp_path / "plain", derived=False)
    assert not [r for r in all_pairs(root) if r["derived"]]
