"""Simplicity metrics, filters and miners of the seed papers (SPEC §5.4–5.7). Django-free.

Light modules are imported here; model-backed ones (``gain_classifier``, ``muss_mining``,
``parsing``) are imported from their modules so importing this package stays cheap.

Example:
    >>> from workers.engine.simplicity import corpus_sari
    >>> round(corpus_sari(["a b c d"], ["a b c d"], [["a b c"]])["keep"], 1) > 0
    True
"""
from __future__ import annotations

from .bleu import sentence_bleu
from .edits import (
    levenshtein_distance,
    levenshtein_ratio,
    levenshtein_similarity,
    replace_only_levenshtein_similarity,
    word_error_rate,
)
from .pairs import TextPair, read_pairs
from .pivot import PivotDecision, pivot_select, select_pairs
from .readability import FRES_COEFFICIENTS, count_text, fres, fres_from_counts
from .sari import corpus_sari, normalize, sentence_sari

__all__ = [
    "FRES_COEFFICIENTS",
    "PivotDecision",
    "TextPair",
    "corpus_sari",
    "count_text",
    "fres",
    "fres_from_counts",
    "levenshtein_distance",
    "levenshtein_ratio",
    "levenshtein_similarity",
    "normalize",
    "pivot_select",
    "read_pairs",
    "replace_only_levenshtein_similarity",
    "select_pairs",
    "sentence_bleu",
    "sentence_sari",
    "word_error_rate",
]
