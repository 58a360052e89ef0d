"""Sum4Simp attributes, Eq. 3/4 scores, the T threshold and persistence."""
from __future__ import annotations

import math

import pytest

from workers.engine.simplicity.pairs import TextPair
from workers.engine.simplicity.sum4simp_filter import (
    NormalFit,
    OddsRatios,
    Sum4SimpFilter,
    load_lexicon,
    normal_score,
)

REFERENCE = [
    TextPair("The committee ratified the comprehensive legislation yesterday.", "They passed the law.", ("They passed the law.",)),
    TextPair("Precipitation was exceptionally abundant in April.", "It rained a lot in April.", ("It rained a lot.",)),
    TextPair("He subsequently relocated to the metropolis.", "Then he moved to the city.", ("He moved to the city.",)),
    TextPair("The physician administered the medication.", "The doctor gave the medicine.", ("The doctor gave the drug.",)),
]


def test_eq3_gives_one_below_the_mean_and_the_two_sided_tail_above():
    fit = NormalFit(mu=0.8, sigma=0.1, n=100)
    assert normal_score(0.7, fit) == 1.0
    assert normal_score(0.8, fit) == 1.0
    # 2·(0.5 − ∫_μ^{μ+σ} f) = 2·(0.5 − 0.3413) ≈ 0.3173
    assert normal_score(0.9, fit) == pytest.approx(0.3173, abs=1e-4)
    assert normal_score(5.0, fit) == pytest.approx(0.0, abs=1e-12)


def test_eq4_is_the_mirror_image_for_sari():
    fit = NormalFit(mu=40.0, sigma=5.0, n=10)
    assert normal_score(45.0, fit, higher_is_simpler=True) == 1.0
    assert normal_score(35.0, fit, higher_is_simpler=True) == pytest.approx(normal_score(45.0, fit))
    assert normal_score(35.0, NormalFit(40.0, 0.0, 1), higher_is_simpler=True) == 0.0


def test_odds_ratio_follows_eq1_with_add_one_smoothing():
    odds = OddsRatios.from_corpora(["utilise utilise the", "the"], ["use the", "the"])
    # complex: utilise 2, the 2 (n=4); simple: use 1, the 2 (n=3); vocab 3
    scale = (3 + 3) / (4 + 3)
    assert odds.ratios["utilise"] == pytest.approx((2 + 1) / (0 + 1) * scale)
    assert odds.ratios["use"] == pytest.approx((0 + 1) / (1 + 1) * scale)
    assert odds.ratios["utilise"] > 1 > odds.ratios["use"]


def test_attributes_reward_shorter_rarer_to_commoner_rewrites():
    flt = Sum4SimpFilter.fit(REFERENCE)
    attrs = flt.attributes("The physician administered the medication.", "The doctor gave the medicine.", ["The doctor gave the drug."])
    assert attrs["len"] == pytest.approx(5 / 5)
    assert attrs["comp"] < 0  # commoner words
    assert attrs["freq"] < 0  # words typical of the simple side
    assert 0 < attrs["sari"] <= 100
    assert set(flt.fits) == {"len", "comp", "freq", "sari"}
    mu = sum(len(p.simple.split()) / len(p.complex.split()) for p in REFERENCE) / len(REFERENCE)
    assert flt.fits["len"].mu == pytest.approx(mu)


def test_T_is_the_weighted_sum_and_the_threshold_decides():
    flt = Sum4SimpFilter.fit(REFERENCE, threshold=0.9)
    good = flt.score_pair("Precipitation was exceptionally abundant in April.", "It rained.", ["It rained."])
    assert good["T"] == pytest.approx(sum(0.25 * good[f"t_{a}"] for a in ("len", "comp", "freq", "sari")))
    bad = flt.score_pair("It rained.", "Precipitation was exceptionally abundant throughout April.", ["It rained."])
    assert good["T"] > bad["T"]
    assert flt.keep("Precipitation was exceptionally abundant in April.", "It rained.", ["It rained."]) == (good["T"] > 0.9)
    assert bad["keep"] == 0.0


def test_a_stitched_source_is_measured_by_its_average_sentence_length():
    # Algorithm 1 stitched a 9-word and a 7-word source sentence for one 8-word target: §3.2 compares the
    # target with the *average* source sentence, so len = 8 / 8 = 1.0 (not 8 / 16 = 0.5: stitching is no
    # compression)
    flt = Sum4SimpFilter.fit(REFERENCE)
    stitched = ["The city council approved the new park on Monday.", "Construction will begin in the early spring."]
    target = "The council approved a park that opens soon."
    attrs = flt.attributes(stitched, target)
    assert attrs["len"] == pytest.approx(8 / ((9 + 7) / 2)) == 1.0
    assert flt.attributes(" ".join(stitched), target)["len"] == pytest.approx(8 / 16)  # a string is one sentence
    # the other attributes read the stitched source as one text
    assert attrs["comp"] == pytest.approx(flt.attributes(" ".join(stitched), target)["comp"])
    assert flt.score_pair(stitched, target)["len"] == attrs["len"]


def test_missing_sari_rescales_T_over_the_available_attributes():
    flt = Sum4SimpFilter.fit(REFERENCE)
    s = flt.score_pair("He subsequently relocated to the metropolis.", "He moved to the city.")
    assert "t_sari" not in s
    assert s["T"] == pytest.approx(sum(s[f"t_{a}"] for a in ("len", "comp", "freq")) / 3)


def test_a_threshold_on_the_unweighted_scale_is_rejected_with_the_explanation():
    with pytest.raises(ValueError, match="unweighted sum"):
        Sum4SimpFilter.fit(REFERENCE, threshold=3.5)


def test_a_lexicon_replaces_wordfreq_and_unknown_words_are_ignored(tmp_path):
    path = tmp_path / "lex.tsv"
    path.write_text("physician\t5.0\ndoctor\t2.0\nmedication\t4.0\nmedicine\t3.0\n", encoding="utf-8")
    lex = load_lexicon(path)
    flt = Sum4SimpFilter.fit(REFERENCE, lexicon=lex)
    assert flt.word_complexity("The physician administered the medication.") == pytest.approx(4.5)
    assert flt.attributes("The physician and medication.", "The doctor and medicine.")["comp"] == pytest.approx(2.5 - 4.5)
    (tmp_path / "bad.tsv").write_text("word\tnot-a-number\n", encoding="utf-8")
    with pytest.raises(ValueError, match="bad.tsv:1"):
        load_lexicon(tmp_path / "bad.tsv")


def test_the_fit_survives_a_json_round_trip(tmp_path):
    flt = Sum4SimpFilter.fit(REFERENCE, threshold=0.8)
    flt.save(tmp_path / "fit.json")
    back = Sum4SimpFilter.load(tmp_path / "fit.json")
    args = ("The physician administered the medication.", "The doctor gave it.", ["The doctor gave it."])
    assert back.score_pair(*args) == flt.score_pair(*args)
    assert back.threshold == 0.8 and math.isclose(back.fits["len"].sigma, flt.fits["len"].sigma)
