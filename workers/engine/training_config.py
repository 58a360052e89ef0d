"""Hyper-parameters of :func:`workers.engine.training.train_aligner` (keys of ``--config``).

Defaults follow the paper where it gives a value (Jiang et al. 2020, App. A.1, Table 9:
learning rate 2e-5 was for BERT-base with 12 layers, max sequence length 128, cross-entropy over
the labels, all layers updated) and were otherwise chosen on inner hold-outs of the OneStop
manual dev set for a 2-core CPU budget (see ``bench/train_bench.py`` and the README).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from .options import Option, build_config, option_fields
from .similarity import SIMILARITY_NAMES

__all__ = ["TRAIN_PARAMS", "TrainConfig"]

TRAIN_PARAMS: tuple[Option, ...] = (
    Option("epochs", "int", 2, 1, None, "most epochs of pair-model fine-tuning (the best held-out epoch is kept)"),
    Option("patience", "int", 2, 1, None, "stop after this many epochs without a better held-out score"),
    Option("lr", "float", 5e-5, 1e-12, None, "pair-model learning rate (AdamW)"),
    Option("batch_size", "int", 16, 1, None, "sentence pairs per pair-model step"),
    Option("warmup", "float", 0.1, 0.0, 0.99, "share of the steps with a linear learning-rate warm-up"),
    Option("weight_decay", "float", 0.01, 0.0, None, "AdamW weight decay of the pair model"),
    Option("max_length", "int", 128, 8, None, "word pieces per (complex, simple) input"),
    Option("freeze_embeddings", "bool", True, help="keep the word-embedding matrix fixed"),
    Option("candidates_per_simple", "int", 5, 1, 100, "complex sentences the pair model scores per simple sentence"),
    Option("negatives_per_simple", "int", 3, 1, None, "candidates per simple sentence in training (hard negatives)"),
    Option("base_similarity", "str", "combined", help="similarity that proposes candidates and is mixed into the "
           "CRF emission", choices=SIMILARITY_NAMES),
    Option("pair_model_weight", "float", 0.5, 0.0, 1.0, "weight of the pair model's P(linked) in the CRF emission"),
    Option("crf_epochs", "int", 50, 0, None, "CRF maximum-likelihood epochs (the best held-out one is kept)"),
    Option("crf_lr", "float", 0.05, 1e-12, None, "CRF learning rate"),
    Option("holdout_fraction", "float", 0.25, 0.0, 0.99, "share of the articles held out when no dev file is given"),
    Option("device", "str", None, help="torch device, e.g. cpu or cuda (default: CUDA when available)",
           nullable=True),
)
"""The training options (``--config`` keys, the API's ``config``): types, ranges, defaults and help."""


@dataclass
@option_fields(TRAIN_PARAMS)
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


    @classmethod
    def build(cls, config: dict[str, Any] | None) -> TrainConfig:
        """Validated config from a dict (:data:`TRAIN_PARAMS`; an unknown key or a bad value is an
        :class:`~workers.engine.options.OptionError`, a ``ValueError``)."""
        return build_config(cls, "train", TRAIN_PARAMS, config)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
