"""Edit-based similarities: character Levenshtein (three definitions) and word error rate.

Several papers say "Levenshtein similarity" and mean different things, so each definition has
its own name here:

* :func:`levenshtein_ratio` — python-Levenshtein's ``ratio`` = 1 − InDel distance / (|a| + |b|)
  (a substitution costs 2). ACCESS's original LevSim control.
* :func:`levenshtein_similarity` — 1 − distance / max(|a|, |b|) (unit costs).
* :func:`replace_only_levenshtein_similarity` — MUSS §3.2: only the *replace* operations of the
  optimal edit script count, divided by min(|a|, |b|) (MUSS's ``get_replace_only_levenshtein_ratio``).
"""
from __future__ import annotations

from rapidfuzz.distance import Indel, Levenshtein

__all__ = [
    "levenshtein_distance",
    "levenshtein_ratio",
    "levenshtein_similarity",
    "replace_only_levenshtein_similarity",
    "word_error_rate",
]


def levenshtein_distance(a: str, b: str) -> int:
    """Unit-cost character edit distance."""
    return int(Levenshtein.distance(a, b))


def levenshtein_ratio(a: str, b: str) -> float:
    """python-Levenshtein ``ratio``: 1 − InDel distance / (|a| + |b|); 1.0 for two empty strings."""
    return float(Indel.normalized_similarity(a, b))


def levenshtein_similarity(a: str, b: str) -> float:
    """1 − distance / max(|a|, |b|); 1.0 for two empty strings."""
    return float(Levenshtein.normalized_similarity(a, b))


def replace_only_levenshtein_similarity(a: str, b: str) -> float:
    """MUSS's replace-only Levenshtein similarity: 1 − #replace edits / min(|a|, |b|).

    Example:
        >>> replace_only_levenshtein_similarity("cat", "cut")
        0.6666666666666667
    """
    shortest = min(len(a), len(b))
    if shortest == 0:
        return 1.0
    replaces = sum(1 for op in Levenshtein.editops(a, b) if op.tag == "replace")
    return 1.0 - replaces / shortest


def word_error_rate(reference: str, hypothesis: str) -> float:
    """Word-level edit distance / number of reference words (WIVICO Table 5 "WER").

    Words are whitespace tokens. An empty reference gives 0.0 if the hypothesis is empty too,
    else 1.0 per hypothesis word (so WER stays finite).
    """
    ref, hyp = reference.split(), hypothesis.split()
    if not ref:
        return float(len(hyp))
    return Levenshtein.distance(ref, hyp) / len(ref)
