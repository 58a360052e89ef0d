"""Sentence BLEU (against sacrebleu's own numbers in tests/data/metrics/bleu_sacrebleu.json, see its
README), the Levenshtein family and WER."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from workers.engine.simplicity.bleu import sentence_bleu
from workers.engine.simplicity.edits import (
    levenshtein_distance,
    levenshtein_ratio,
    levenshtein_similarity,
    replace_only_levenshtein_similarity,
    word_error_rate,
)


def test_bleu_is_100_for_identical_text_and_asymmetric_otherwise():
    assert sentence_bleu("the cat sat on the mat", "the cat sat on the mat") == pytest.approx(100.0)
    short, long_ = "the cat sat", "the cat sat on the mat today"
    assert sentence_bleu(short, long_) != pytest.approx(sentence_bleu(long_, short))  # not symmetric
    assert sentence_bleu("x", ["the cat", "the dog"]) == pytest.approx(0.0)
    with pytest.raises(ValueError):
        sentence_bleu("x", [])


SACREBLEU = Path(__file__).resolve().parents[2] / "data" / "metrics" / "bleu_sacrebleu.json"


def test_bleu_matches_sacrebleus_sentence_bleu_on_the_repositorys_reference_pairs():
    pairs = json.loads(SACREBLEU.read_text(encoding="utf-8"))["pairs"]
    assert pairs
    for case in pairs:
        assert sentence_bleu(case["simple"], case["complex"]) == pytest.approx(case["expected_bleu"], abs=1e-6), case["id"]
        assert sentence_bleu(case["complex"], case["simple"]) == pytest.approx(
            case["expected_bleu_reversed"], abs=1e-6), case["id"]


def test_the_three_levenshtein_definitions_differ_as_documented():
    assert levenshtein_distance("kitten", "sitting") == 3
    assert levenshtein_similarity("kitten", "sitting") == pytest.approx(1 - 3 / 7)
    # InDel: k→s and e→i each cost 2, +1 insert = 5 over 13 characters
    assert levenshtein_ratio("kitten", "sitting") == pytest.approx(1 - 5 / 13)
    # replace-only: two replacements over the shorter length 6
    assert replace_only_levenshtein_similarity("kitten", "sitting") == pytest.approx(1 - 2 / 6)
    assert replace_only_levenshtein_similarity("", "abc") == 1.0


def test_word_error_rate_counts_word_edits_per_reference_word():
    assert word_error_rate("a b c d", "a x c") == pytest.approx(2 / 4)
    assert word_error_rate("", "") == 0.0
    assert word_error_rate("", "a b") == 2.0
