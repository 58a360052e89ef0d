"""MUSS sequence extraction, noise filter, faiss search and the pair filters."""
from __future__ import annotations

import numpy as np
import pytest

from tests.engine.simplicity._fakes import BagOfWordsEncoder
from workers.engine.simplicity.muss_mining import (
    build_index,
    contained,
    extract_sequences,
    is_noisy,
    mine_paraphrases,
    near_identical,
)


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
    kept, stats = mine_paraphrases(DOCS, encoder=enc, max_distance=1.0, max_relative=1.0)
    keys = {frozenset({(p.query.doc, p.query.start, p.query.end), (p.neighbour.doc, p.neighbour.start, p.neighbour.end)}) for p in kept}
    assert frozenset({("d1", 0, 1), ("d2", 0, 1)}) in keys
    assert frozenset({("d1", 0, 1), ("d3", 0, 1)}) not in keys  # same words, only "."→"!"
    assert stats["near_identical"] >= 1
    assert stats["sequences"] == sum(3 for _ in DOCS)
    assert len(keys) == len(kept)  # symmetric duplicates reported once
    for p in kept:
        assert not p.query.overlaps(p.neighbour)
    kept2, stats2 = mine_paraphrases(
        DOCS, encoder=enc, max_distance=1.0, max_relative=1.0,
        evaluation_set=["Alpha beta gamma delta eta theta."],
    )
    assert all("eta theta" not in p.query.text + p.neighbour.text for p in kept2)
    assert stats2["evaluation_set"] >= 1


def test_the_distance_bound_and_margin_cut_weak_neighbours():
    enc = BagOfWordsEncoder()
    loose, _ = mine_paraphrases(DOCS, encoder=enc, max_distance=2.0, max_relative=10.0)
    tight, stats = mine_paraphrases(DOCS, encoder=enc, max_distance=0.9, max_relative=10.0)
    assert len(tight) < len(loose) and stats["too_far"] > 0
    assert all(p.distance <= 0.9 for p in tight)
    margin, mstats = mine_paraphrases(DOCS, encoder=enc, max_distance=2.0, max_relative=0.6)
    assert all(p.relative_distance <= 0.6 for p in margin) and mstats["margin"] > 0


def test_same_document_modes():
    doc = {"d": ["one two three four five six.", "seven eight nine ten eleven twelve."],
           "e": ["one two three four five six seven eight nine ten eleven twelve thirteen."]}
    enc = BagOfWordsEncoder()
    kept, stats = mine_paraphrases(doc, encoder=enc, max_distance=2.0, max_relative=10.0, same_document="any")
    assert all(p.query.doc != p.neighbour.doc for p in kept)
    with pytest.raises(ValueError, match="choose one of"):
        mine_paraphrases(doc, encoder=enc, same_document="never")  # type: ignore[arg-type]
