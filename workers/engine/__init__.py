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
from typing import TYPE_CHECKING, Any

from .errors import EngineError, EngineInputError
from .io import read_alignments, read_pairs, write_alignments
from .methods import (
    MethodFacts,
    ProgressFn,
    available_methods,
    get_aligner,
    is_run_level,
    method_defaults,
    method_facts,
    method_schema,
)
from .metrics import evaluate as _evaluate
from .metrics import tune_threshold
from .options import Option, OptionError, build_config, check_config, defaults, describe, from_text
from .registry import Registry, UnknownName
from .text import SUPPORTED_LANGUAGES, is_identical, normalise, split_document
from .types import PAIR_LABELS, AlignedPair, Alignment, ArticlePair, Document, PairLabel

if TYPE_CHECKING:  # the names loaded on first use (below), for type checkers and editors
    from .candidates import capture_rate, select_candidates
    from .encoders import configure_embedding_store, encoder_counters, prime_encoders
    from .grouping import connected_groups
    from .methods.crf import save_crf_aligner, train_crf_aligner
    from .methods.wivico import WivicoAligner
    from .mining import STAGES as MINING_STAGES
    from .mining import CorpusDocument, CorpusPair, MiningConfig, MiningWork
    from .mining.config import MINING_PARAMS
    from .paragraph_alignment import (
        PARAGRAPH_VARIANTS,
        NewselaThresholds,
        WikiThresholds,
        align_paragraphs,
        calibrate,
        paragraph_similarity,
    )
    from .similarity import SIMILARITY_NAMES, SimilarityModel, get_similarity
    from .simplicity import FRES_COEFFICIENTS
    from .simplicity.access import access_attributes
    from .simplicity.bleu import sentence_bleu
    from .simplicity.embedding import default_encoder
    from .simplicity.gain_classifier import GainClassifier, cutoff_counts
    from .simplicity.gain_features import GainFeaturizer
    from .simplicity.pairs import TextPair
    from .simplicity.parsing import DEFAULT_PIPELINES, load_parser
    from .simplicity.pivot import H_BLEU, H_FRES, pivot_select
    from .simplicity.sum4simp_filter import DEFAULT_THRESHOLD as SUM4SIMP_DEFAULT_THRESHOLD
    from .simplicity.sum4simp_filter import Sum4SimpFilter
    from .simplicity.wivico_thresholds import (
        PROPAGATION_METHODS,
        calibrate_label_thresholds,
        propagate_thresholds,
    )
    from .training import TrainingCancelled, train_aligner
    from .training_config import TRAIN_PARAMS, TrainConfig

__all__ = [
    # documents, alignments and errors
    "Document",
    "ArticlePair",
    "AlignedPair",
    "Alignment",
    "PairLabel",
    "PAIR_LABELS",
    "EngineError",
    "EngineInputError",
    # aligning and evaluating
    "align",
    "evaluate",
    "tune_threshold",
    "available_methods",
    "get_aligner",
    "is_run_level",
    "method_schema",
    "method_defaults",
    "method_facts",
    "MethodFacts",
    "ProgressFn",
    # method options (one schema for CLI, API and forms)
    "Option",
    "OptionError",
    "build_config",
    "check_config",
    "defaults",
    "from_text",
    "Registry",
    "UnknownName",
    "describe",
    # text
    "SUPPORTED_LANGUAGES",
    "split_document",
    "normalise",
    "is_identical",
    # files
    "read_pairs",
    "read_alignments",
    "write_alignments",
    # loaded on first use (they import torch, scikit-learn, SciPy, faiss or spaCy):
    "get_similarity",
    "SimilarityModel",
    "SIMILARITY_NAMES",
    "connected_groups",
    # paragraph alignment (Jiang et al. 2020, §2.4)
    "calibrate",
    "align_paragraphs",
    "paragraph_similarity",
    "PARAGRAPH_VARIANTS",
    "NewselaThresholds",
    "WikiThresholds",
    "select_candidates",
    "capture_rate",
    "train_crf_aligner",
    "save_crf_aligner",
    "train_aligner",
    "TrainingCancelled",
    "TrainConfig",
    "TRAIN_PARAMS",
    "WivicoAligner",
    # corpus mining (MUSS)
    "MINING_STAGES",
    "CorpusDocument",
    "CorpusPair",
    "MiningConfig",
    "MINING_PARAMS",
    "MiningWork",
    # pair-level simplicity tools
    "FRES_COEFFICIENTS",
    "DEFAULT_PIPELINES",
    "load_parser",
    "access_attributes",
    "sentence_bleu",
    "default_encoder",
    "PROPAGATION_METHODS",
    "propagate_thresholds",
    "calibrate_label_thresholds",
    "GainClassifier",
    "GainFeaturizer",
    "cutoff_counts",
    "TextPair",
    "Sum4SimpFilter",
    "SUM4SIMP_DEFAULT_THRESHOLD",
    "H_BLEU",
    "H_FRES",
    "pivot_select",
    # sentence embeddings cached on disk, and encoding counters
    "configure_embedding_store",
    "encoder_counters",
    "prime_encoders",
]

# name -> (module, attribute); read on every access (never cached here), so a test that
# patches e.g. ``workers.engine.simplicity.embedding.default_encoder`` is seen through the API
_LAZY: dict[str, tuple[str, str]] = {
    "get_similarity": ("similarity", "get_similarity"),
    "configure_embedding_store": ("encoders", "configure_embedding_store"),
    "encoder_counters": ("encoders", "encoder_counters"),
    "prime_encoders": ("encoders", "prime_encoders"),
    "SimilarityModel": ("similarity", "SimilarityModel"),
    "SIMILARITY_NAMES": ("similarity", "SIMILARITY_NAMES"),
    "calibrate": ("paragraph_alignment", "calibrate"),
    "align_paragraphs": ("paragraph_alignment", "align_paragraphs"),
    "paragraph_similarity": ("paragraph_alignment", "paragraph_similarity"),
    "PARAGRAPH_VARIANTS": ("paragraph_alignment", "PARAGRAPH_VARIANTS"),
    "NewselaThresholds": ("paragraph_alignment", "NewselaThresholds"),
    "WikiThresholds": ("paragraph_alignment", "WikiThresholds"),
    "connected_groups": ("grouping", "connected_groups"),
    "select_candidates": ("candidates", "select_candidates"),
    "capture_rate": ("candidates", "capture_rate"),
    "train_crf_aligner": ("methods.crf", "train_crf_aligner"),
    "save_crf_aligner": ("methods.crf", "save_crf_aligner"),
    "train_aligner": ("training", "train_aligner"),
    "TrainingCancelled": ("training", "TrainingCancelled"),
    "TrainConfig": ("training_config", "TrainConfig"),
    "TRAIN_PARAMS": ("training_config", "TRAIN_PARAMS"),
    "MINING_PARAMS": ("mining.config", "MINING_PARAMS"),
    "WivicoAligner": ("methods.wivico", "WivicoAligner"),
    "MINING_STAGES": ("mining", "STAGES"),
    "CorpusDocument": ("mining", "CorpusDocument"),
    "CorpusPair": ("mining", "CorpusPair"),
    "MiningConfig": ("mining", "MiningConfig"),
    "MiningWork": ("mining", "MiningWork"),
    "FRES_COEFFICIENTS": ("simplicity", "FRES_COEFFICIENTS"),
    "DEFAULT_PIPELINES": ("simplicity.parsing", "DEFAULT_PIPELINES"),
    "load_parser": ("simplicity.parsing", "load_parser"),
    "access_attributes": ("simplicity.access", "access_attributes"),
    "sentence_bleu": ("simplicity.bleu", "sentence_bleu"),
    "default_encoder": ("simplicity.embedding", "default_encoder"),
    "PROPAGATION_METHODS": ("simplicity.wivico_thresholds", "PROPAGATION_METHODS"),
    "propagate_thresholds": ("simplicity.wivico_thresholds", "propagate_thresholds"),
    "calibrate_label_thresholds": ("simplicity.wivico_thresholds", "calibrate_label_thresholds"),
    "GainClassifier": ("simplicity.gain_classifier", "GainClassifier"),
    "cutoff_counts": ("simplicity.gain_classifier", "cutoff_counts"),
    "GainFeaturizer": ("simplicity.gain_features", "GainFeaturizer"),
    "TextPair": ("simplicity.pairs", "TextPair"),
    "Sum4SimpFilter": ("simplicity.sum4simp_filter", "Sum4SimpFilter"),
    "SUM4SIMP_DEFAULT_THRESHOLD": ("simplicity.sum4simp_filter", "DEFAULT_THRESHOLD"),
    "H_BLEU": ("simplicity.pivot", "H_BLEU"),
    "H_FRES": ("simplicity.pivot", "H_FRES"),
    "pivot_select": ("simplicity.pivot", "pivot_select"),
}


def __getattr__(name: str) -> Any:
    """Import the heavier parts of the API only when they are used (PEP 562): the web process
    imports this package for its types and option schema and should not load torch or SciPy."""
    if name in _LAZY:
        import importlib

        module, attribute = _LAZY[name]
        return getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


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
