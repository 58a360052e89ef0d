"""Sentence BLEU, the Levenshtein family and WER."""
from __future__ import annotations

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
