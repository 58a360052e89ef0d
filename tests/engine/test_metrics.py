from __future__ import annotations

import itertools

import numpy as np
import pytest

from workers.engine.metrics import evaluate, excluded_links, prf, tune_threshold
from workers.engine.types import AlignedPair, Alignment, ArticlePair, Document


def _pair(gold, labels=None, identical=(), complex_sents=("c0", "c1", "c2"),
          simple_sents=("s0", "s1", "s2")):
    return ArticlePair("x", Document((tuple(complex_sents),)), Document((tuple(simple_sents),)),
                       gold=tuple(gold), identical=tuple(identical), gold_labels=labels)


def test_task1_counts_partial_links_and_task2_does_not():
    gold = _pair([(0, 0), (1, 1), (2, 2)])
    pred = Alignment("x", [AlignedPair((0,), (0,), "aligned", 1.0),
                           AlignedPair((1,), (1,), "partial", 0.5),
                           AlignedPair((2,), (2,), "partial", 0.4)])
    r = evaluate([pred], [gold])
    assert r["task1"]["tp"] == 3 and r["task1"]["n_pred"] == 3 and r["task1"]["f1"] == 1.0
    assert r["task2"]["tp"] == 1 and r["task2"]["n_pred"] == 1
    assert r["task2"]["recall"] == pytest.approx(1 / 3)


def test_gold_labels_marked_partial_are_not_task2_gold():
    gold = _pair([(0, 0), (1, 1)], labels=("aligned", "partial"))
    pred = Alignment("x", [AlignedPair((0,), (0,), "aligned", 1.0),
                           AlignedPair((1,), (1,), "partial", 0.5)])
    r = evaluate([pred], [gold])
    assert r["task2"]["f1"] == 1.0 and r["task2"]["n_gold"] == 1


def test_identical_pairs_are_left_out_of_both_sides():
    gold = _pair([(0, 0), (1, 1)], identical=[(1, 1)],
                 complex_sents=("same text", "b", "c"), simple_sents=("same  text", "b", "z"))
    assert excluded_links(gold) == {(0, 0), (1, 1)}
    pred = Alignment("x", [AlignedPair((0, 1), (0, 1), "aligned", 1.0)])
    r = evaluate([pred], [gold])
    assert r["task1"]["n_gold"] == 0 and r["task1"]["n_pred"] == 2
    r_keep = evaluate([pred], [gold], exclude_identical=False)
    assert r_keep["task1"]["tp"] == 2


def test_an_article_without_prediction_counts_as_empty_or_raises():
    gold = _pair([(0, 0)])
    assert evaluate([], [gold])["task1"]["recall"] == 0.0
    with pytest.raises(Exception, match="no prediction"):
        evaluate([], [gold], missing="error")
    with pytest.raises(ValueError, match="empty, error"):
        evaluate([], [gold], missing="maybe")


def test_prf_is_zero_when_undefined():
    assert prf(0, 0, 0).f1 == 0.0
    assert prf(1, 2, 4).f1 == pytest.approx(2 * 0.5 * 0.25 / 0.75)


def test_tuned_threshold_is_the_best_cut_by_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(20):
        s = np.round(rng.random(30), 1)  # many ties
        y = rng.random(30) < 0.4
        n_gold = int(y.sum()) + int(rng.integers(0, 3))
        best = -1.0
        for t in sorted(set(s.tolist())):
            pred = s >= t
            best = max(best, prf(int((pred & y).sum()), int(pred.sum()), n_gold).f1)
        r = tune_threshold(s, y, n_gold)
        assert r.f1 == pytest.approx(best)
        pred = s >= r.threshold
        assert prf(int((pred & y).sum()), int(pred.sum()), n_gold).f1 == pytest.approx(r.f1)


def test_tune_threshold_rejects_inconsistent_input():
    with pytest.raises(ValueError):
        tune_threshold([0.1, 0.2], [True])
    with pytest.raises(ValueError):
        tune_threshold([0.1, 0.2], [True, True], n_gold=1)
    assert tune_threshold([], [], n_gold=0).f1 == 0.0


def test_scores_are_micro_averaged_over_articles():
    g1 = ArticlePair("a", Document((("x", "y"),)), Document((("p", "q"),)), gold=((0, 0), (1, 1)))
    g2 = ArticlePair("b", Document((("x",),)), Document((("p",),)), gold=((0, 0),))
    preds = [Alignment("a", [AlignedPair((0,), (0,), "aligned", 1)]),
             Alignment("b", [AlignedPair((0,), (0,), "aligned", 1)])]
    r = evaluate(preds, [g1, g2])
    assert r["n_articles"] == 2 and r["task1"]["recall"] == pytest.approx(2 / 3)
    assert list(itertools.chain(r)) == ["task1", "task2", "n_articles"]
