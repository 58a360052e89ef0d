"""The wivico n:m window aligner."""
from __future__ import annotations

import pytest

from tests.engine.simplicity._fakes import BagOfWordsEncoder
from workers.engine.methods import get_aligner
from workers.engine.methods.wivico import WivicoAligner
from workers.engine.types import ArticlePair, Document

COMPLEX = ["alpha beta gamma delta.", "epsilon zeta eta theta.", "kappa lambda mu nu.", "xi omicron pi rho."]
SIMPLE = ["alpha beta gamma delta epsilon zeta eta theta.", "kappa lambda mu.", "sigma tau."]


def _pair() -> ArticlePair:
    return ArticlePair("w1", Document((tuple(COMPLEX),)), Document((tuple(SIMPLE),)))


def test_it_finds_a_fusion_as_a_2to1_window_and_labels_by_cutoff():
    thresholds = {f"{n}:{m}": 0.9 for n in (1, 2, 3) for m in (1, 2, 3)}
    aligner = WivicoAligner({"thresholds": thresholds, "partial_threshold": 0.7, "threshold": 0.9},
                            encoder=BagOfWordsEncoder())
    [res] = aligner.align([_pair()])
    got = {(p.complex, p.simple): p for p in res.pairs}
    assert got[((0, 1), (0,))].label == "aligned"  # two complex sentences fused into one
    assert got[((0, 1), (0,))].features["n"] == 2.0
    # "kappa lambda mu nu" vs "kappa lambda mu": 3/(2·√3) ≈ 0.866: partially valid
    assert got[((2,), (1,))].label == "partial"
    assert not any(3 in p.complex for p in res.pairs)
    used = [c for p in res.pairs for c in p.complex]
    assert len(used) == len(set(used))  # greedy selection reuses no sentence


def test_select_all_keeps_every_window_above_its_cutoff():
    thresholds = {f"{n}:{m}": 0.5 for n in (1, 2, 3) for m in (1, 2, 3)}
    greedy = WivicoAligner({"thresholds": thresholds}, encoder=BagOfWordsEncoder()).align([_pair()])[0]
    everything = WivicoAligner({"thresholds": thresholds, "select": "all"}, encoder=BagOfWordsEncoder()).align([_pair()])[0]
    assert len(everything.pairs) > len(greedy.pairs)


def test_thresholds_are_propagated_from_the_1to1_cutoff_over_config_means():
    [res] = WivicoAligner({"threshold": 0.8}, encoder=BagOfWordsEncoder()).align([_pair()])
    assert res.meta["thresholds"]["1:1"] == 0.8
    assert set(res.meta["thresholds"]) == {f"{n}:{m}" for n in (1, 2, 3) for m in (1, 2, 3)}
    assert res.meta["thresholds"]["3:3"] == pytest.approx(res.meta["config_means"]["3:3"])


def test_windows_over_the_token_limit_are_skipped_and_counted():
    long_sentence = " ".join(["word"] * 60) + "."
    ap = ArticlePair("w2", Document(((long_sentence, "short one.", "short two."),)), Document((("short one.",),)))
    [res] = WivicoAligner({"max_tokens": 40, "threshold": 0.9}, encoder=BagOfWordsEncoder()).align([ap])
    # windows containing the long sentence: [0], [0,1], [0,1,2]
    assert res.meta["skipped_complex_windows"] == 3
    assert res.meta["skipped_simple_windows"] == 0
    assert any(p.complex == (1,) for p in res.pairs)


def test_bad_config_is_rejected_with_the_valid_values():
    with pytest.raises(ValueError, match="choose one of: greedy, all"):
        get_aligner("wivico", {"select": "best"})
    with pytest.raises(ValueError, match="1..3"):
        get_aligner("wivico", {"max_n": 4})


@pytest.mark.slow
def test_with_minilm_it_skips_inputs_over_the_encoders_max_length():
    long_sentence = " ".join(["information"] * 300) + "."
    ap = ArticlePair("w3", Document(((long_sentence, "The cat sat on the mat."),)),
                     Document((("A cat was sitting on the mat.",),)))
    [res] = get_aligner("wivico", {"threshold": 0.6}).align([ap])
    assert res.meta["skipped_complex_windows"] == 2  # [0] and [0, 1]
    assert res.meta["max_tokens"] > 0
    assert ((1,), (0,)) in {(p.complex, p.simple) for p in res.pairs}


def test_the_offset_propagation_can_be_chosen():
    [res] = WivicoAligner({"threshold": 0.8, "propagation": "offset"}, encoder=BagOfWordsEncoder()).align([_pair()])
    gap = 0.8 - res.meta["config_means"]["1:1"]
    assert res.meta["thresholds"]["2:2"] == pytest.approx(min(1.0, res.meta["config_means"]["2:2"] + gap))
    assert res.meta["propagation"] == "offset"


OTHERS = [
    ArticlePair("w4", Document((("sigma tau upsilon.", "phi chi psi omega.", "alpha beta."),)),
                Document((("sigma tau.", "phi chi psi omega alpha beta."),))),
    ArticlePair("w5", Document((("one two three four.", "five six seven."),)),
                Document((("one two.", "three four five six seven.", "eight nine."),))),
]


def _cutoffs(alignment) -> tuple[dict, dict]:
    return alignment.meta["thresholds"], alignment.meta["partial_thresholds"]


def test_cut_offs_are_the_runs_whatever_batch_an_article_is_aligned_in():
    run = [_pair(), *OTHERS]
    alone = WivicoAligner({"threshold": 0.8}, encoder=BagOfWordsEncoder()).align([_pair()])[0]
    whole = WivicoAligner({"threshold": 0.8}, encoder=BagOfWordsEncoder()).align(run)  # one call = one run
    assert _cutoffs(alone) != _cutoffs(whole[0])  # the run's means are not one article's
    aligner = WivicoAligner({"threshold": 0.8}, encoder=BagOfWordsEncoder())
    prepared = aligner.prepare(iter(run), total=len(run))
    assert prepared["scope"] == "run" and prepared["document_pairs"] == 3 and len(prepared["thresholds"]) == 9
    for batches in ([[run[0]], [run[1]], [run[2]]], [[run[0], run[1]], [run[2]]], [[run[2], run[0]], [run[1]]]):
        got = {a.id: a for batch in batches for a in aligner.align(batch)}
        for expected in whole:
            assert _cutoffs(got[expected.id]) == _cutoffs(expected)
            assert got[expected.id].pairs == expected.pairs
            assert got[expected.id].meta["cutoff_scope"] == "run"
        aligner.prepare(iter(run))  # the next "run": prepared again
    assert prepared["thresholds"] == whole[0].meta["thresholds"]


def test_the_second_pass_reuses_the_first_pass_window_scores():
    encoder = BagOfWordsEncoder()
    aligner = WivicoAligner({"threshold": 0.8}, encoder=encoder)
    aligner.prepare([_pair(), *OTHERS])
    calls = encoder.calls
    aligner.align([_pair()])
    assert encoder.calls == calls  # cached: no window encoded twice
    tight = WivicoAligner({"threshold": 0.8, "cache_mb": 0}, encoder=BagOfWordsEncoder())
    tight.prepare([_pair(), *OTHERS])
    assert tight.align([_pair()])[0].pairs == aligner.align([_pair()])[0].pairs  # recomputed, same result


def test_explicit_cut_offs_need_no_first_pass_and_keep_their_partial_values():
    encoder = BagOfWordsEncoder()
    valid = {f"{n}:{m}": 0.9 for n in (1, 2, 3) for m in (1, 2, 3)}
    partial = {**{k: 0.5 for k in valid}, "1:1": 0.85}
    aligner = WivicoAligner({"thresholds": valid, "partial_thresholds": partial}, encoder=encoder)
    state = aligner.prepare(iter([_pair()]))
    assert encoder.calls == 0 and state["scope"] == "explicit" and state["partial_thresholds"]["1:1"] == 0.85
    [res] = aligner.align([_pair()])
    got = {(p.complex, p.simple): p for p in res.pairs}
    assert got[((2,), (1,))].label == "partial" and got[((2,), (1,))].features["cutoff"] == 0.85
    with pytest.raises(ValueError, match="partial_thresholds needs thresholds"):
        WivicoAligner({"partial_thresholds": partial})
