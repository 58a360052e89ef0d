"""The alignment engine: documents in, sentence alignments out (SPEC §2, §4, §5.1–5.3).

Django-free and Celery-free: the Celery tasks, the Django importer and the CLI
(``python -m workers.engine``) all call this package.

Example:
    >>> from workers.engine import ArticlePair, Document, align
    >>> pair = ArticlePair(
    ...     id="a1",
    ...     complex=Document(paragraphs=(("The cat sat on the old mat.", "Prices rose."),)),
    ...     simple=Document(paragraphs=(("The cat sat on the mat.",),)),
    ... )
    >>> [(p.complex, p.simple) for p in align([pair], method="tfidf")[0].pairs]
    [((0,), (0,))]
"""
from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from collections.abc import Iterable, Sequence
from typing import Any

from .errors import EngineError, EngineInputError
from .io import read_alignments, read_pairs, write_alignments
from .methods import ProgressFn, available_methods, get_aligner
from .metrics import evaluate as _evaluate
from .metrics import tune_threshold
from .types import PAIR_LABELS, AlignedPair, Alignment, ArticlePair, Document, PairLabel

__all__ = [
    "Document",
    "ArticlePair",
    "AlignedPair",
    "Alignment",
    "PairLabel",
    "PAIR_LABELS",
    "EngineError",
    "EngineInputError",
    "align",
    "evaluate",
    "tune_threshold",
    "available_methods",
    "get_aligner",
    "read_pairs",
    "read_alignments",
    "write_alignments",
    # loaded on first use (they import torch / scikit-learn):
    "get_similarity",
    "calibrate",
    "select_candidates",
    "capture_rate",
    "train_crf_aligner",
    "save_crf_aligner",
    "train_aligner",
    "TrainingCancelled",
]

_LAZY = {
    "get_similarity": "similarity",
    "calibrate": "paragraph_alignment",
    "select_candidates": "candidates",
    "capture_rate": "candidates",
    "train_crf_aligner": "methods.crf",
    "save_crf_aligner": "methods.crf",
    "train_aligner": "training",
    "TrainingCancelled": "training",
}


def __getattr__(name: str) -> Any:
    """Import the heavier parts of the API only when they are used (PEP 562)."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def align(
    pairs: Sequence[ArticlePair],
    method: str = "crf",
    config: dict[str, Any] | None = None,
    model: str | None = None,
    progress: ProgressFn | None = None,
) -> list[Alignment]:
    """Align every article pair with ``method``.

    Args:
        pairs: article pairs (complex and simple documents, pre-split).
        method: one of :func:`available_methods` (``crf``, ``sbert``, ``tfidf``, ...).
        config: method options (see each method's module); unknown keys are an error.
        model: model path/name for the method (encoder, cross-encoder or trained CRF).
        progress: called as ``progress(fraction_done, message)``.

    Returns:
        One :class:`Alignment` per input pair, in order.

    Raises:
        ValueError: unknown method or option (the message lists the valid ones).
        EngineError: a model cannot be loaded.
    """
    return get_aligner(method, config, model).align(list(pairs), progress=progress)


def evaluate(
    predictions: Iterable[Alignment], gold: Iterable[ArticlePair], **kwargs: Any
) -> dict[str, object]:
    """Task 1 / Task 2 precision, recall and F1 (see :func:`workers.engine.metrics.evaluate`).

    Example:
        >>> doc = Document(paragraphs=(("A b c.",),))
        >>> gold = ArticlePair("x", doc, Document(paragraphs=(("A b.",),)), gold=((0, 0),))
        >>> evaluate([Alignment("x", [AlignedPair((0,), (0,), "aligned", 1.0)])],
        ...          [gold])["task1"]["f1"]
        1.0
    """
    return _evaluate(predictions, gold, **kwargs)
