"""Sentence-level overlap scores in exports (``export.metrics``): GLEU as NLTK computes it (symmetric, on words
and punctuation) and sentence BLEU for the CRF paper's band filter."""
from __future__ import annotations

import pytest
from nltk.translate.gleu_score import sentence_gleu

from annotation.services.export.metrics import bleu, gleu, gleu_of, profile, tokenize


def test_text_is_cut_into_words_and_punctuation_case_kept():
    assert tokenize("It's 5 p.m., Bob!") == ["It", "'", "s", "5", "p", ".", "m", ".", ",", "Bob", "!"]


def test_a_profile_counts_every_n_gram_up_to_four():
    grams, total = profile("a b a")
    assert grams["a"] == 2 and grams[("a", "b")] == 1 and grams[("a", "b", "a")] == 1
    assert total == 3 + 2 + 1  # no 4-gram in three tokens
    assert gleu_of(profile("a b c"), profile("")) == 0.0


@pytest.mark.parametrize("a,b", [
    ("The cat sat on the mat .", "The cat sat on the mat ."),
    ("Honey bees communicate the location of flowers by dancing.", "Bees dance to show where flowers are."),
    ("a a a b", "a a b b b"),
    ("one", "one two"),
    ("", "anything"),
])
def test_gleu_agrees_with_nltk(a, b):
    expected = sentence_gleu([tokenize(a)], tokenize(b)) if tokenize(a) and tokenize(b) else 0.0
    assert gleu(a, b) == pytest.approx(expected)
    assert gleu(a, b) == pytest.approx(gleu(b, a))


def test_bleu_is_in_zero_to_one_and_highest_for_a_copy():
    same = bleu("Bees are dying across the country.", "Bees are dying across the country.")
    other = bleu("Cats sleep.", "Bees are dying across the country.")
    assert same == pytest.approx(1.0) and 0.0 <= other < same
