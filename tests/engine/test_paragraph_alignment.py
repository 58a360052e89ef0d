from __future__ import annotations

import numpy as np
import pytest

from workers.engine.paragraph_alignment import (
    NewselaThresholds,
    WikiThresholds,
    align_paragraphs,
    align_paragraphs_newsela,
    align_paragraphs_wiki,
    calibrate,
    gold_paragraph_links,
    merge_neighbours,
    paragraph_similarity,
)
from workers.engine.types import ArticlePair, Document

OFF = float("inf")


def test_algorithm1_pools_avg_of_max_and_max():
    # complex paragraphs: [0, 0, 1]; simple paragraphs: [0, 1]
    sim = np.array([[0.9, 0.1], [0.2, 0.3], [0.4, 0.8]])
    simP = paragraph_similarity(sim, (0, 0, 1), (0, 1))
    assert simP.shape == (2, 2, 2)
    assert simP[0, 0, 0] == pytest.approx(0.9) and simP[0, 1, 0] == pytest.approx(0.3)
    assert simP[1, 1, 1] == pytest.approx(0.8) and simP[1, 0, 1] == pytest.approx(0.4)


def test_newsela_rule_one_needs_similarity_and_close_position():
    simP = np.zeros((2, 3, 3))
    simP[0] = [[0.9, 0.2, 0.1], [0.1, 0.2, 0.1], [0.95, 0.1, 0.3]]
    t = NewselaThresholds(tau1=0.5, tau2=0.34, tau3=OFF, tau4=OFF, tau5=0.5)
    m = align_paragraphs_newsela(simP, t)
    # row 1 is below tau1; row 2's best (j=0) is too far away (|3/3 - 1/3| > 0.34)
    assert m.tolist() == [[True, False, False], [False, False, False], [False, False, False]]


def test_newsela_rules_two_and_three_add_strong_and_consecutive_pairs():
    simP = np.zeros((2, 2, 4))
    simP[1] = [[0.99, 0.2, 0.1, 0.1], [0.1, 0.8, 0.85, 0.1]]
    t = NewselaThresholds(tau1=OFF, tau2=0.34, tau3=0.95, tau4=0.75, tau5=0.6)
    m = align_paragraphs_newsela(simP, t)
    assert m.tolist() == [[True, False, False, False], [False, True, True, False]]


def test_wiki_variant_drops_far_weak_candidates_but_keeps_strong_ones():
    simP = np.array([[0.9, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.92, 0.97, 0.1]])
    t = WikiThresholds(tau1=0.85, tau2=OFF, tau3=0.5, tau4=5, tau5=0.95)
    m = align_paragraphs_wiki(simP, t)
    # candidates 0, 7, 8 span 8 > 5 paragraphs: keep the closest to i=0 and any > tau5
    assert np.flatnonzero(m[0]).tolist() == [0, 8]


def test_neighbouring_complex_paragraphs_on_one_simple_paragraph_are_merged():
    m = np.array([[True, True, False, True], [False, False, True, False]])
    assert merge_neighbours(m) == [((0, 1), 0), ((2,), 1), ((3,), 0)]


def test_sentence_mask_allows_only_pairs_in_aligned_paragraphs():
    sim = np.eye(4)
    t = NewselaThresholds(tau1=0.5, tau2=0.5, tau3=OFF, tau4=OFF, tau5=0.5)
    pa = align_paragraphs(sim, (0, 0, 1, 1), (0, 0, 1, 1), variant="newsela", thresholds=t)
    mask = pa.sentence_mask((0, 0, 1, 1), (0, 0, 1, 1))
    assert mask.tolist() == [[True, True, False, False], [True, True, False, False],
                             [False, False, True, True], [False, False, True, True]]
    assert pa.links == [((0,), 0), ((1,), 1)]


def test_bad_variants_and_threshold_types_are_rejected():
    with pytest.raises(ValueError, match="choose one of: newsela, wiki"):
        align_paragraphs(np.eye(2), (0, 1), (0, 1), variant="simple")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        align_paragraphs(np.eye(2), (0, 1), (0, 1), variant="wiki", thresholds=NewselaThresholds())


def _synthetic_pairs(n_pairs: int = 8, seed: int = 0):
    """Article pairs whose gold links stay within paragraph i ↔ i, with cosine-like scores;
    the simple side ends with an inserted paragraph that matches nothing."""
    rng = np.random.default_rng(seed)
    pairs, sims = [], []
    for k in range(n_pairs):
        n_par = int(rng.integers(3, 7))
        sizes = rng.integers(1, 4, n_par)
        cdoc = Document(tuple(tuple(f"c{p}.{i}" for i in range(s)) for p, s in enumerate(sizes)))
        sdoc = Document(tuple(tuple(f"s{p}.{i}" for i in range(s)) for p, s in enumerate(sizes))
                        + (("inserted 1", "inserted 2"),))
        n = len(cdoc)
        sim = rng.uniform(0.05, 0.35, (n, n + 2))
        gold = [(i, i) for i in range(n)]
        for i in range(n):
            sim[i, i] = rng.uniform(0.55, 0.8)
        pairs.append(ArticlePair(f"p{k}", cdoc, sdoc, gold=tuple(gold)))
        sims.append(sim)
    return pairs, sims


@pytest.mark.parametrize("variant", ["newsela", "wiki"])
def test_calibration_fits_thresholds_to_the_similarity_scale(variant):
    pairs, sims = _synthetic_pairs()
    res = calibrate(pairs, sims=sims, variant=variant)
    # the paper's thresholds (for BERT probabilities near 1) do not fit cosine-like scores
    assert res.f1 > res.default_f1
    assert res.f1 >= 0.95
    n_par = len(pairs[0].complex.paragraphs)
    assert gold_paragraph_links(pairs[0]) == {(i, i) for i in range(n_par)}


def test_calibration_needs_gold():
    p = ArticlePair("x", Document((("a",),)), Document((("b",),)))
    with pytest.raises(ValueError, match="gold"):
        calibrate([p], sims=[np.ones((1, 1))])
