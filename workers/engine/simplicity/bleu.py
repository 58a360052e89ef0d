"""Sentence BLEU with sacrebleu's defaults (pivot paper §3 "BLEU selector"; WIVICO Table 5 "BLEU").

Defaults are sacrebleu's ``sentence_bleu``: exp smoothing, case-sensitive, 13a tokenisation,
effective order. The pivot paper measures how much of the source the simplification kept, with
the *simple* side as hypothesis and the complex side as reference; ``hypothesis``/``reference``
are explicit here because BLEU is asymmetric (brevity penalty).
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

__all__ = ["sentence_bleu"]


@lru_cache(maxsize=1)
def _bleu():  # type: ignore[no-untyped-def]
    from sacrebleu.metrics import BLEU

    return BLEU(effective_order=True)


def sentence_bleu(hypothesis: str, references: str | Sequence[str]) -> float:
    """sacrebleu sentence BLEU (0..100) of ``hypothesis`` against one or more references.

    Example:
        >>> round(sentence_bleu("the cat sat on the mat", "the cat sat on the mat"), 1)
        100.0
    """
    refs = [references] if isinstance(references, str) else list(references)
    if not refs:
        raise ValueError("at least one reference is required")
    return float(_bleu().sentence_score(hypothesis, refs).score)
