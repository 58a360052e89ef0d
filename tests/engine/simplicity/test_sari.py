"""SARI: hand-worked cases, EASSE's conventions, EASSE's own numbers on the repository's reference
cases (tests/data/metrics/sari_easse.json, see its README), and (optionally) the shared reference values."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from workers.engine.simplicity.sari import corpus_sari, normalize, sentence_sari

REFERENCE = Path(__file__).resolve().parents[3] / ".." / "shared" / "bench" / "metrics" / "sari_cases.json"
EASSE = Path(__file__).resolve().parents[2] / "data" / "metrics" / "sari_easse.json"
VARIANTS = {
    "use_f1_for_deletion=False": {"use_f1_for_deletion": False},
    "lowercase=False": {"lowercase": False},
    "use_paper_version=True": {"use_paper_version": True},
}


def test_it_scores_a_perfect_one_reference_edit_as_worked_out_by_hand():
    # n=1,2: add/keep/del all perfect; n=3: add & del perfect, keep has nothing; n=4: no n-grams.
    got = sentence_sari("a b c", "a b d", ["a b d"])
    assert got["add"] == pytest.approx(75.0)
    assert got["keep"] == pytest.approx(50.0)
    assert got["del"] == pytest.approx(75.0)
    assert got["sari"] == pytest.approx(200 / 3)


def test_it_uses_f1_for_deletion_by_default_and_precision_on_request():
    # Two refs (one deletes c, one keeps it): del P = 1/2, R = 1 for n = 1..3.
    f1 = sentence_sari("a b c", "a b", ["a b", "a b c"])
    prec = sentence_sari("a b c", "a b", ["a b", "a b c"], use_f1_for_deletion=False)
    assert f1["del"] == pytest.approx(100 * 3 * (2 / 3) / 4)
    assert prec["del"] == pytest.approx(100 * 3 * 0.5 / 4)
    keep = 100 * ((2 * 0.8 / 1.8) + (2 * (2 / 3) / (5 / 3))) / 4
    assert f1["keep"] == pytest.approx(keep)
    assert f1["add"] == 0.0  # adds nothing → 0, not 100
    assert f1["sari"] == pytest.approx((0 + keep + f1["del"]) / 3)


def test_copying_the_source_scores_only_keep():
    got = sentence_sari("The cat sat on the mat .", "The cat sat on the mat .", ["A cat sat ."])
    assert got["add"] == 0.0 and got["del"] == 0.0
    assert got["sari"] == pytest.approx(got["keep"] / 3)


def test_it_lowercases_and_tokenises_like_13a():
    assert normalize('He said "3.5%," OK.') == ["he", "said", '"', "3.5", "%", ",", '"', "ok", "."]
    assert normalize("Hello", lowercase=False) == ["Hello"]
    a = sentence_sari("The Cat sat.", "the cat sat .", ["The cat sat."])
    b = sentence_sari("The Cat sat.", "the cat sat .", ["The cat sat."], lowercase=False)
    assert a["sari"] != b["sari"]


def test_corpus_sari_sums_statistics_instead_of_averaging_sentences():
    orig = ["a b c d e f", "x y"]
    sys = ["a b c d", "x y z"]
    refs = [["a b c d", "x y w"]]
    corpus = corpus_sari(orig, sys, refs)["sari"]
    mean = (sentence_sari(orig[0], sys[0], [refs[0][0]])["sari"] + sentence_sari(orig[1], sys[1], [refs[0][1]])["sari"]) / 2
    assert corpus != pytest.approx(mean)


def test_the_paper_version_averages_precision_and_recall_before_f1():
    orig, sys, refs = ["a b c d"], ["a b x"], [["a b y"], ["a x d"]]
    macro = corpus_sari(orig, sys, refs)
    paper = corpus_sari(orig, sys, refs, use_paper_version=True)
    assert macro["sari"] != pytest.approx(paper["sari"])


def test_it_rejects_misshaped_references():
    with pytest.raises(ValueError, match="reference stream 0"):
        corpus_sari(["a", "b"], ["a", "b"], [["a"]])
    with pytest.raises(ValueError, match="not strings"):
        corpus_sari(["a"], ["a"], ["a"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="not one string"):
        sentence_sari("a", "a", "a")


def test_it_matches_easse_on_the_repositorys_reference_cases():
    data = json.loads(EASSE.read_text(encoding="utf-8"))
    assert data["corpus_cases"] and data["sentence_cases"]
    for case in data["corpus_cases"]:
        got = corpus_sari(case["orig_sents"], case["sys_sents"], case["refs_sents"])
        for key in ("sari", "add", "keep", "del"):
            assert got[key] == pytest.approx(case[f"expected_{key}"], abs=1e-6), (case["id"], key)
        for name, kwargs in VARIANTS.items():
            got_v = corpus_sari(case["orig_sents"], case["sys_sents"], case["refs_sents"], **kwargs)
            assert got_v["sari"] == pytest.approx(case["variants"][name], abs=1e-6), (case["id"], name)
    for case in data["sentence_cases"]:
        got = sentence_sari(case["orig_sent"], case["sys_sent"], case["ref_sents"])
        for key in ("sari", "add", "keep", "del"):
            assert got[key] == pytest.approx(case[f"expected_{key}"], abs=1e-6), (case["id"], key)
        prec = sentence_sari(case["orig_sent"], case["sys_sent"], case["ref_sents"], use_f1_for_deletion=False)
        assert prec["sari"] == pytest.approx(case["expected_sari_del_precision"], abs=1e-6), case["id"]


@pytest.mark.skipif(not REFERENCE.exists(), reason=f"EASSE reference values not found at {REFERENCE}")
def test_it_matches_easse_reference_values_within_0_01():
    data = json.loads(REFERENCE.read_text(encoding="utf-8"))
    variants = VARIANTS
    for case in data["cases"]:
        got = corpus_sari(case["orig_sents"], case["sys_sents"], case["refs_sents"])
        for key in ("sari", "add", "keep", "del"):
            expected = case["expected_corpus_sari"] if key == "sari" else case[f"expected_{key}"]
            assert abs(got[key] - expected) <= 0.01, (case["id"], key)
        for name, kwargs in variants.items():
            got_v = corpus_sari(case["orig_sents"], case["sys_sents"], case["refs_sents"], **kwargs)
            assert abs(got_v["sari"] - case["variants"][name]["sari"]) <= 0.01, (case["id"], name)
    for case in data["sentence_cases"]:
        got = sentence_sari(case["orig_sent"], case["sys_sent"], case["ref_sents"])
        assert abs(got["sari"] - case["expected_sari"]) <= 0.01, case["id"]
        prec = sentence_sari(case["orig_sent"], case["sys_sent"], case["ref_sents"], use_f1_for_deletion=False)
        assert abs(prec["sari"] - case["expected_sari_del_precision"]) <= 0.01, case["id"]
