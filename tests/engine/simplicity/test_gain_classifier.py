"""The WIVICO FFNN gain classifier: training data, learning, cut-off counts, save/load."""
from __future__ import annotations

import random

import numpy as np
import pytest

from workers.engine.simplicity.gain_classifier import GainClassifier, build_training_set, cutoff_counts
from workers.engine.simplicity.gain_features import GainFeaturizer

LONG = [
    "The municipal council unanimously approved the comprehensive restructuring of regional transportation services",
    "Researchers subsequently demonstrated that the experimental medication significantly reduced inflammation",
    "Notwithstanding considerable opposition, the administration implemented extensive environmental regulations",
    "The archaeological excavation uncovered numerous artefacts originating from the early medieval period",
]
SHORT = ["The council changed the buses", "The new drug helped", "The rules came in", "They found old things"]


def _pairs(n: int, seed: int = 1) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for k in range(n):
        i = rng.randrange(4)
        extra = " ".join(rng.sample(LONG[rng.randrange(4)].split(), 3))
        out.append((f"{LONG[i]} {extra}.", f"{SHORT[i]} {k}."))
    return out


def test_training_set_swaps_the_second_half_and_drops_identical_pairs():
    pairs = [("c1", "s1"), ("c2", "s2"), ("same", "same"), ("c3", "s3"), ("c4", "s4")]
    texts, y = build_training_set(pairs, seed=0)
    assert len(texts) == 4 and y.tolist() == [1, 1, 0, 0]
    assert all(t[0].startswith("c") for t in texts[:2]) and all(t[0].startswith("s") for t in texts[2:])


@pytest.mark.slow
def test_it_learns_that_shortening_is_simplification_and_round_trips(tmp_path):
    fz = GainFeaturizer("en", parser=None)
    clf = GainClassifier.train(_pairs(200), featurizer=fz, epochs=30, seed=0)
    assert clf.metrics["test_accuracy"] >= 0.9
    probe = [(LONG[0] + ".", SHORT[0] + "."), (SHORT[1] + ".", LONG[1] + ".")]
    p = clf.predict_proba(probe)
    assert p[0] > 0.5 > p[1]
    clf.save(tmp_path / "clf")
    back = GainClassifier.load(tmp_path / "clf", featurizer=fz)
    assert np.allclose(back.predict_proba(probe), p, atol=1e-6)
    assert back.feature_names == clf.feature_names


def test_it_needs_enough_pairs_and_a_saved_directory(tmp_path):
    with pytest.raises(ValueError, match="at least 10"):
        GainClassifier.train([("a b c", "a")] * 3, featurizer=GainFeaturizer("en", parser=None))
    with pytest.raises(ValueError, match="gain_classifier.json"):
        GainClassifier.load(tmp_path)


def test_cutoff_counts_are_cumulative_from_lenient_to_strict():
    probs = [0.95, 0.85, 0.65, 0.55, 0.1]
    got = cutoff_counts(probs, groups=["1:1", "1:1", "2:1", "1:1", "2:1"])
    assert got["all"] == {"0.5": 4, "0.6": 3, "0.7": 2, "0.8": 2, "0.9": 1}
    assert got["groups"]["2:1"] == {"0.5": 1, "0.6": 1, "0.7": 0, "0.8": 0, "0.9": 0}
    with pytest.raises(ValueError):
        cutoff_counts([0.5], groups=["a", "b"])
