"""Hyper-parameters of :func:`workers.engine.training.train_aligner` (keys of ``--config``).

Defaults follow the paper where it gives a value (Jiang et al. 2020, App. A.1, Table 9:
learning rate 2e-5 was for BERT-base with 12 layers, max sequence length 128, cross-entropy over
the labels, all layers updated) and were otherwise chosen on inner hold-outs of the OneStop
manual dev set for a 2-core CPU budget (see ``bench/train_bench.py`` and the README).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from ..errors import check_options

__all__ = ["TrainConfig"]


@dataclass
class TrainConfig:
    """Options of aligner training.

    Attributes:
        epochs: most epochs of pair-model fine-tuning; the epoch with the best held-out score
            (whole pipeline, mean of Task 1 and Task 2 F1) is kept (early stopping). Two: on the
            OneStop dev folds epochs 3–4 did not raise that score (0.972, 0.973, 0.962, 0.973 after
            epochs 1–4 of one fold), and each costs ~90 s for 9 articles on a 2-core CPU, where the
            whole training must stay within 5 minutes.
        patience: stop after this many epochs without a better held-out score.
        lr: pair-model learning rate (AdamW, linear decay after warm-up).
        batch_size: sentence pairs per pair-model step.
        warmup: share of the steps with a linear learning-rate warm-up.
        weight_decay: AdamW weight decay of the pair model.
        max_length: word pieces per (complex, simple) input (paper: 128).
        freeze_embeddings: keep the word-embedding matrix fixed (half of MiniLM's weights): on
            a 2-core CPU a step costs about a third less, and with a few thousand training pairs
            words seen only at test time keep their pre-trained vectors.
        candidates_per_simple: the complex sentences scored by the pair model for each simple
            sentence: the top ``k`` under the base similarity plus the neighbours of the best
            one (:func:`~workers.engine.pair_similarity.top_candidates`); the others get P(linked) 0.
        negatives_per_simple: the same with a smaller ``k`` for training: these candidates,
            less the gold links, are the hard negatives.
        base_similarity: similarity that proposes candidates and is mixed into the CRF emission.
        pair_model_weight: weight of the pair model's P(linked) in the CRF emission
            (``w·P(linked) + (1 − w)·base``).
        crf_epochs, crf_lr: CRF maximum-likelihood training (Eq. 6); the epoch with the best
            held-out Task 1 F1 is kept.
        holdout_fraction: share of the input articles held out for early stopping and thresholds
            when no dev file is given (at least one article when there are two or more).
        device: ``None`` = CUDA when available, else CPU.
    """

    epochs: int = 2
    patience: int = 2
    lr: float = 5e-5
    batch_size: int = 16
    warmup: float = 0.1
    weight_decay: float = 0.01
    max_length: int = 128
    freeze_embeddings: bool = True
    candidates_per_simple: int = 5
    negatives_per_simple: int = 3
    base_similarity: str = "combined"
    pair_model_weight: float = 0.5
    crf_epochs: int = 50
    crf_lr: float = 0.05
    holdout_fraction: float = 0.25
    device: str | None = None

    @classmethod
    def build(cls, config: dict[str, Any] | None) -> TrainConfig:
        """Validated config from a dict (unknown keys and bad values are a ``ValueError``)."""
        config = dict(config or {})
        check_options("train", config, {f.name for f in fields(cls)})
        cfg = cls(**config)
        if cfg.epochs < 1 or cfg.crf_epochs < 0 or cfg.batch_size < 1 or cfg.patience < 1:
            raise ValueError("need epochs >= 1, patience >= 1, crf_epochs >= 0 and batch_size >= 1")
        if min(cfg.candidates_per_simple, cfg.negatives_per_simple) < 1 or cfg.max_length < 8:
            raise ValueError("need candidates_per_simple, negatives_per_simple >= 1 and max_length >= 8")
        if not 0.0 <= cfg.pair_model_weight <= 1.0 or not 0.0 <= cfg.holdout_fraction < 1.0:
            raise ValueError("need 0 <= pair_model_weight <= 1 and 0 <= holdout_fraction < 1")
        if cfg.lr <= 0 or cfg.crf_lr <= 0 or not 0.0 <= cfg.warmup < 1.0:
            raise ValueError("need lr > 0, crf_lr > 0 and 0 <= warmup < 1")
        return cfg

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
