"""The learnt aligned/partial decision and the domain profile (workers.engine.decisions)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.engine.cases import one_sentence_case, structured_cases
from workers.engine.decisions import (
    GROUP_FEATURES,
    Decisions,
    DomainProfile,
    GroupLabeller,
    article_profile,
    group_features,
)
from workers.engine.similarity import get_similarity

SCORES = {"group_sim": 0.8, "sim_max": 0.8, "sim_mean": 0.8, "p_aligned": 0.5}


def test_group_features_measure_shape_length_and_content_kept():
    whole = group_features(["The mayor said on Monday that the plan would cost 5 million."],
                           ["The mayor said the plan would cost 5 million."], SCORES)
    half = group_features(["The mayor said on Monday that the plan would cost 5 million."],
                          ["The plan is costly."], SCORES)
    split = group_features(["The mayor spoke. The plan is costly."], ["The mayor spoke.", "It costs a lot."], SCORES)
    assert set(whole) == set(GROUP_FEATURES)
    assert whole["one_to_one"] == 1.0 and split["one_to_one"] == 0.0 and split["n_simple"] == 2.0
    assert whole["complex_kept"] > half["complex_kept"]
    assert whole["log_length_ratio"] > half["log_length_ratio"]
    assert whole["simple_from_complex"] == 1.0


def _rows(rng, n):
    """Aligned groups keep most content; partial ones about half."""
    rows, aligned = [], []
    for k in range(n):
        good = k % 2 == 0
        kept = rng.uniform(0.7, 1.0) if good else rng.uniform(0.2, 0.6)
        rows.append({"one_to_one": 1.0, "n_complex": 1.0, "n_simple": 1.0, "log_length_ratio": np.log(kept),
                     "complex_kept": kept, "simple_from_complex": 0.9, "group_sim": 0.7, "sim_max": 0.7,
                     "sim_mean": 0.7, "p_aligned": 0.5})
        aligned.append(good)
    return rows, aligned


def test_the_labeller_learns_which_groups_are_aligned_and_survives_json():
    rows, aligned = _rows(np.random.default_rng(0), 80)
    labeller = GroupLabeller.fit(rows, aligned, [f for f in GROUP_FEATURES if f != "p_aligned"])
    p = labeller.probability(rows)
    assert ((p >= 0.5) == np.array(aligned)).mean() > 0.95
    again = Decisions.from_dict(json.loads(json.dumps(Decisions(labeller).to_dict()))).labeller
    assert np.allclose(again.probability(rows), p)


def test_the_labeller_needs_both_classes_and_its_features():
    rows, _ = _rows(np.random.default_rng(1), 10)
    assert GroupLabeller.fit(rows, [True] * 10, ["complex_kept"]) is None
    labeller = GroupLabeller.fit(rows, [k % 2 == 0 for k in range(10)], ["complex_kept", "p_aligned"])
    with pytest.raises(ValueError, match="lack 'p_aligned'"):
        labeller.probability([{"complex_kept": 0.5}])


def test_the_domain_profile_keeps_articles_like_the_training_ones():
    sim = get_similarity("charngram")
    cases = structured_cases()
    profile = DomainProfile.fit([article_profile(p, sim) for p in cases])
    assert profile.n_articles == len(cases)
    assert all(profile.outside(article_profile(p, sim)) is None for p in cases)
    reason = profile.outside(article_profile(one_sentence_case(), sim))
    assert reason and "one sentence" in reason
    far = {name: high * 3 + 1 for name, (_, high, _) in profile.ranges.items()}
    assert "outside the training range" in profile.outside(far)
