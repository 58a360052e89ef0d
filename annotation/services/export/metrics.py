"""Sentence-level overlap scores written into exports: GLEU (the wiki-manual TSV's last column) and
sentence BLEU (the CRF paper's 0.1–0.9 band filter on automatic data, after Štajner et al. 2015).

:func:`gleu` is NLTK's ``sentence_gleu`` (Wu et al. 2016: the minimum of n-gram precision and
recall over 1..4-grams) re-implemented without NLTK's per-call overhead (a test checks that both
agree); it is symmetric, so which side is the hypothesis does not matter. Text is tokenised into
words and punctuation (case kept).
"""
from __future__ import annotations

import re
from collections import Counter
from itertools import chain

_TOKEN = re.compile(r"\w+|[^\w\s]")


def tokenize(text: str) -> list[str]:
    """Words and punctuation marks.

    Example:
        >>> tokenize("It's 5 p.m.")
        ['It', "'", 's', '5', 'p', '.', 'm', '.']
    """
    return _TOKEN.findall(text)


def profile(text: str | list[str], max_n: int = 4) -> tuple[Counter, int]:
    """The 1..``max_n``-gram counts of a sentence and how many n-grams it has (reusable across pairs)."""
    tokens = tokenize(text) if isinstance(text, str) else text
    grams = Counter(chain(tokens, *(zip(*(tokens[i:] for i in range(n))) for n in range(2, max_n + 1))))
    return grams, sum(max(0, len(tokens) - n + 1) for n in range(1, max_n + 1))


def gleu_of(a: tuple[Counter, int], b: tuple[Counter, int]) -> float:
    """GLEU of two :func:`profile` s."""
    (small, a_total), (large, b_total) = a, b
    if not a_total or not b_total:
        return 0.0
    if len(small) > len(large):
        small, large = large, small
    get = large.get
    tp = 0
    for gram, count in small.items():
        other = get(gram)
        if other:
            tp += count if count < other else other
    return tp / (a_total if a_total > b_total else b_total)


def gleu(reference: str | list[str], hypothesis: str | list[str], max_n: int = 4) -> float:
    """Sentence GLEU in [0, 1] (strings are tokenised with :func:`tokenize`).

    Example:
        >>> gleu("the cat sat on the mat", "the cat sat on the mat")
        1.0
        >>> gleu("a b c", "x y z")
        0.0
    """
    return gleu_of(profile(reference, max_n), profile(hypothesis, max_n))


def bleu(simple: str, complex_: str) -> float:
    """sacrebleu sentence BLEU in [0, 1] of the simple side against the complex side (the app's
    ``workers.engine.simplicity.bleu`` with sacrebleu's defaults)."""
    from workers.engine import sentence_bleu

    return sentence_bleu(simple, complex_) / 100.0

