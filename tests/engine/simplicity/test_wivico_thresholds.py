"""WIVICO's valid-mean threshold and the decreasing-shift propagation."""
from __future__ import annotations

import pytest

from workers.engine.simplicity.wivico_thresholds import (
    CONFIGS,
    calibrate_label_thresholds,
    decreasing_shift,
    propagate_thresholds,
    shift_proportion,
)


def test_the_1to1_threshold_is_the_mean_of_valid_pairs():
    scores = [0.9, 0.8, 0.7, 0.5, 0.2]
    labels = ["valid", "Valid", "partially valid", "partially valid", "non-valid"]
    got = calibrate_label_thresholds(scores, labels)
    assert got["valid"] == pytest.approx(0.85)
    assert got["partial"] == pytest.approx(0.6)
    with pytest.raises(ValueError, match="no pair labelled"):
        calibrate_label_thresholds([0.3], ["non-valid"])


def test_decreasing_shift_follows_the_papers_steps():
    scores = [0.8, 0.6, 0.5, 0.4]
    ratios = [0.2 / 0.6, 0.1 / 0.5, 0.1 / 0.4]
    p = sum(ratios) / 3
    assert shift_proportion(scores) == pytest.approx(p)
    got = decreasing_shift(scores, 0.81)
    assert got[0] == pytest.approx(0.8 + 0.81)
    assert got[1] == pytest.approx(0.6 + 0.81 * (1 - 1 / 3) * p)
    assert got[2] == pytest.approx(0.5 + 0.81 * (1 - 2 / 3) * p)
    assert got[3] == pytest.approx(0.4)  # the shift has decreased to zero


def test_propagation_keeps_the_1to1_cutoff_and_shifts_the_others():
    means = {c: 0.7 - 0.03 * i for i, c in enumerate(CONFIGS)}
    got = propagate_thresholds(means, 0.81)
    assert got[(1, 1)] == 0.81
    shifted = decreasing_shift([means[c] for c in CONFIGS], 0.81)
    for i, c in enumerate(CONFIGS[1:], start=1):
        assert got[c] == pytest.approx(shifted[i])
    assert got[(3, 3)] == pytest.approx(means[(3, 3)])
    with pytest.raises(ValueError, match="1:1"):
        propagate_thresholds({(1, 2): 0.5})


def test_the_offset_alternative_keeps_each_configs_distance_above_its_mean():
    means = {(1, 1): 0.5, (1, 2): 0.4, (3, 3): 0.3}
    got = propagate_thresholds(means, 0.8, method="offset")
    assert got == pytest.approx({(1, 1): 0.8, (1, 2): 0.7, (3, 3): 0.6})
    with pytest.raises(ValueError, match="choose one of: paper, offset"):
        propagate_thresholds(means, 0.8, method="guess")
