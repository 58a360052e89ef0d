"""Training the aligner from annotations (paper §2–4; SPEC §4 ``train``), Django-free.

One file per concern: :mod:`.config` (hyper-parameters), :mod:`.data` (hold-out, pair-model
examples), :mod:`.pair_model` (fine-tuned 3-class cross-encoder), :mod:`.crf_training` (CRF by
maximum likelihood), :mod:`.thresholds` (held-out decisions), :mod:`.manifest` (provenance) and
:mod:`.trainer` (the three stages in order). The CLI is ``python -m workers.engine train``.

Example:
    >>> from workers.engine import read_pairs, train_aligner  # doctest: +SKIP
    >>> manifest = train_aligner(read_pairs("train.jsonl", require_gold=True), "models/v1",
    ...                          seed=0, progress=lambda r: print(r.line()))  # doctest: +SKIP
"""
from __future__ import annotations

from ..training_config import TrainConfig
from .pair_model import EpochReport, StepReport
from .trainer import STAGES, ProgressCallback, StepCallback, TrainingCancelled, check_training_pairs, train_aligner

__all__ = ["TrainConfig", "EpochReport", "StepReport", "STAGES", "ProgressCallback", "StepCallback", "TrainingCancelled",
           "check_training_pairs", "train_aligner"]
