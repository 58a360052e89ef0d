"""MUSS sequence extraction, noise filter, faiss search and the pair filters."""
from __future__ import annotations

import numpy as np
import pytest

from tests.engine.simplicity._fakes import BagOfWordsEncoder
from workers.engine.mining import MiningConfig
from workers.engine.simplicity.muss_mining import (
    build_index,
    contained,
    extract_sequences,
    is_noisy,
    mine_paraphrases,
    near_identical,
)


def mine(documents, encoder=None, **options):
    """The in-memory miner with ``options`` parsed once into its options object (these tests' default:
    only overlapping windows of one document are never paired)."""
    return mine_paraphrases(documents, MiningConfig.from_dict({"same_document": "overlapping", **options}),
                            encoder=encoder)

def test_sequences_are_adjacent_runs_up_to_the_character_limit():
    sents = ["a" * 100, "b" * 100, "c" * 98, "d" * 400]
    got = [(s.start, s.end) for s in extract_sequences("doc", sents, 300)]
    # a+b+c joined = 100 + 1 + 100 + 1 + 98 = 300 fits; anything with d (400) does not
    assert got == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    one_more = [(s.start, s.end) for s in extract_sequences("doc", ["a" * 100, "b" * 100, "c" * 99], 300)]
    assert (0, 3) not in one_more  # 301 characters
    assert all(len(s.text) <= 300 for s in extract_sequences("doc", sents, 300))


def test_noise_means_more_than_ten_percent_punctuation():
    assert not is_noisy("A perfectly normal sentence, with one comma.")
    assert is_noisy("!!! ??? ... ### click here !!!")


def test_pair_filters():
    assert near_identical("The cat sat on the mat.", "the cat sat on the mat!")
    assert not near_identical("The cat sat on the mat.", "A dog lay on a rug.")
    assert contained("the cat sat", "Yesterday THE CAT SAT down.")


def test_flat_and_ivf_indexes_find_the_same_nearest_neighbour():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2000, 32)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    flat = build_index(x, exact_limit=10_000)
    ivf = build_index(x, exact_limit=100)
    assert type(flat).__name__ == "IndexFlatIP" and type(ivf).__name__ != "IndexFlatIP"
    q = x[:20]
    _, i_flat = flat.search(q, 1)
    _, i_ivf = ivf.search(q, 1)
    assert (i_flat[:, 0] == np.arange(20)).all()
    assert (i_ivf[:, 0] == i_flat[:, 0]).mean() >= 0.9


DOCS = {
    "d1": ["alpha beta gamma delta epsilon zeta.", "Something else entirely here."],
    "d2": ["alpha beta gamma delta eta theta.", "More unrelated filler words."],
    "d3": ["alpha beta gamma delta epsilon zeta!", "Yet another different line."],
    "d4": ["Totally different topic about ships and harbours.", "Ships sail from harbours daily."],
}


def test_mining_keeps_paraphrases_and_drops_near_identical_and_evaluation_pairs():
    enc = BagOfWordsEncoder()
    kept, stats = mine(DOCS, encoder=enc, max_distance=1.0, max_relative=1.0)
    keys = {frozenset({(p.query.doc, p.query.start, p.query.end), (p.neighbour.doc, p.neighbour.start, p.neighbour.end)}) for p in kept}
    assert frozenset({("d1", 0, 1), ("d2", 0, 1)}) in keys
    assert frozenset({("d1", 0, 1), ("d3", 0, 1)}) not in keys  # same words, only "."→"!"
    assert stats["near_identical"] >= 1
    assert stats["sequences"] == sum(3 for _ in DOCS)
    assert len(keys) == len(kept)  # symmetric duplicates reported once
    for p in kept:
        assert not p.query.overlaps(p.neighbour)
    kept2, stats2 = mine(
        DOCS, encoder=enc, max_distance=1.0, max_relative=1.0,
        evaluation_set=["Alpha beta gamma delta eta theta."],
    )
    assert all("eta theta" not in p.query.text + p.neighbour.text for p in kept2)
    assert stats2["evaluation_set"] >= 1


def test_the_distance_bound_and_margin_cut_weak_neighbours():
    enc = BagOfWordsEncoder()
    loose, _ = mine(DOCS, encoder=enc, max_distance=2.0, max_relative=10.0)
    tight, stats = mine(DOCS, encoder=enc, max_distance=0.9, max_relative=10.0)
    assert len(tight) < len(loose) and stats["too_far"] > 0
    assert all(p.distance <= 0.9 for p in tight)
    margin, mstats = mine(DOCS, encoder=enc, max_distance=2.0, max_relative=0.6)
    assert all(p.relative_distance <= 0.6 for p in margin) and mstats["margin"] > 0


def test_same_document_modes():
    doc = {"d": ["one two three four five six.", "seven eight nine ten eleven twelve."],
           "e": ["one two three four five six seven eight nine ten eleven twelve thirteen."]}
    enc = BagOfWordsEncoder()
    kept, stats = mine(doc, encoder=enc, max_distance=2.0, max_relative=10.0, same_document="any")
    assert all(p.query.doc != p.neighbour.doc for p in kept)
    with pytest.raises(ValueError, match="choose one of"):
        mine(doc, encoder=enc, same_document="never")  # type: ignore[arg-type]


def _pair_keys(kept):
    return {frozenset({(p.query.doc, p.query.start, p.query.end), (p.neighbour.doc, p.neighbour.start, p.neighbour.end)})
            for p in kept}


# The query sentence's own windows ([s0,s1], [s0,s1,s2], …) share all its words, so they are its
# nearest vectors; the cross-document paraphrase in "b" comes after them, the filler in "c"/"d" far.
WINDOWS = {
    "a": ["Alpha beta gamma delta epsilon zeta.", "Omega psi.", "Chi phi."],
    "b": ["Alpha beta gamma delta kappa lambda."],
    "c": ["Ships sail from harbours every morning."],
    "d": ["Bread rises slowly in a warm kitchen."],
}


def test_same_document_windows_no_longer_block_a_cross_document_paraphrase():
    enc = BagOfWordsEncoder()
    params = dict(encoder=enc, k=3, max_distance=1.0, max_relative=0.6)
    kept, stats = mine(WINDOWS, **params)
    # the candidates of a:[0,1) are b (d = 2 − 2·4/6 ≈ 0.667) and the two fillers (d = 2):
    # relative distance 0.667 / 1.556 ≈ 0.43 ≤ 0.6 — kept
    assert frozenset({("a", 0, 1), ("b", 0, 1)}) in _pair_keys(kept)
    pair = next(p for p in kept if {p.query.doc, p.neighbour.doc} == {"a", "b"} and p.query.end - p.query.start == 1
                and p.neighbour.end - p.neighbour.start == 1)
    assert pair.relative_distance == pytest.approx((2 - 8 / 6) / ((2 - 8 / 6 + 4) / 3), abs=1e-4)
    assert stats["same_document"] > 0  # a's windows were skipped before the top-k
    for p in kept:
        assert not p.query.overlaps(p.neighbour)
    # Reference-code order (margin on the raw top-k, same-document pairs dropped afterwards): the
    # windows [s0,s1] and [s0,s1,s2] take two of the three slots and the margin rejects b.
    old, old_stats = mine(WINDOWS, exclude_same_document_first=False, **params)
    assert frozenset({("a", 0, 1), ("b", 0, 1)}) not in _pair_keys(old)
    assert old_stats["margin"] > 0


def test_blocked_neighbours_beyond_the_first_search_surplus_are_skipped_too():
    # 40 sentences sharing "alpha beta gamma": hundreds of same-document windows are nearer to
    # a:[0,1) than b's paraphrase — more than the first pass's surplus, so a second pass runs.
    doc_a = ["Alpha beta gamma delta."] + [f"Alpha beta gamma w{i}." for i in range(39)]
    docs = {"a": doc_a, "b": ["Alpha beta gamma epsilon zeta."]}
    enc = BagOfWordsEncoder()
    kept, stats = mine(docs, encoder=enc, k=1, max_distance=1.0, same_document="any")
    assert frozenset({("a", 0, 1), ("b", 0, 1)}) in _pair_keys(kept)
    assert all(p.query.doc != p.neighbour.doc for p in kept)
    assert stats["same_document"] > 32
    old, _ = mine(docs, encoder=enc, k=1, max_distance=1.0, same_document="any",
                              exclude_same_document_first=False)
    assert frozenset({("a", 0, 1), ("b", 0, 1)}) not in _pair_keys(old)


# "h" is hub-like: it lies close to many sequences (q, p, x4), so it is near q — nearer than the
# distance bound — but hardly nearer than q's other cross-document neighbours; "p" is much nearer.
HUB = {
    "q": ["Red green blue cyan.", "Engines hum quietly tonight."],
    "p": ["Cyan blue green red teal."],
    "h": ["Cyan magenta red yellow green black blue white."],
    "x1": ["Red green orange pink."],
    "x2": ["Red blue violet brown."],
    "x3": ["Green cyan silver gold."],
    "x4": ["Magenta yellow black white grey."],
}


def test_the_margin_still_rejects_a_hub_like_candidate():
    enc = BagOfWordsEncoder()
    params = dict(encoder=enc, k=4, max_distance=0.6)
    kept, stats = mine(HUB, max_relative=0.6, **params)
    keys = _pair_keys(kept)
    assert frozenset({("q", 0, 1), ("p", 0, 1)}) in keys
    assert frozenset({("q", 0, 1), ("h", 0, 1)}) not in keys
    assert stats["margin"] > 0
    # q's candidates are cross-document only (its window with "Engines hum …" was skipped):
    # p (cos 4/√20 ≈ 0.894, d ≈ 0.211), h (cos 4/√32 ≈ 0.707, d ≈ 0.586), two of x1–x3 (d = 1):
    # relative distances 0.211/0.699 ≈ 0.30 and 0.586/0.699 ≈ 0.84.
    loose, _ = mine(HUB, max_relative=10.0, **params)
    hub = [p for p in loose if {p.query.doc, p.neighbour.doc} == {"q", "h"} and p.query.end - p.query.start == 1
           and p.neighbour.end - p.neighbour.start == 1]
    assert hub, "without the margin the hub pair passes the distance bound"
    assert all(p.distance == pytest.approx(2 - 8 / 32**0.5, abs=1e-4) for p in hub)
    assert all(p.relative_distance > 0.6 for p in hub)
    para = next(p for p in loose if p.query.doc == "q" and p.neighbour.doc == "p" and p.query.end == 1)
    mean = (2 - 8 / 20**0.5 + 2 - 8 / 32**0.5 + 2.0) / 4
    assert para.relative_distance == pytest.approx((2 - 8 / 20**0.5) / mean, abs=1e-4)
