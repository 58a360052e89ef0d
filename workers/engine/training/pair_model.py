"""The fine-tuned similarity: a 3-class cross-encoder (paper §2.2 "Semantic Similarity", App. A.1).

The paper fine-tunes BERT on its labelled sentence pairs, reading the pair jointly and
classifying the ``[CLS]`` representation with a cross-entropy loss, all layers updated. Here the
same is done with sentence-transformers' ``CrossEncoderTrainer``: the model starts from the
project's encoder (default: the bundled all-MiniLM-L6-v2) with a fresh 3-way head —
``not_aligned`` / ``partial`` / ``aligned`` (``config.id2label``). It is saved in
sentence-transformers format, so ``CrossEncoder(path)`` loads it anywhere;
``predict(pairs, apply_softmax=True)`` gives the three probabilities (the saved default
activation is the identity: logits).

After every epoch the caller's ``evaluate`` scores the held-out articles; the best epoch's weights
are kept and training stops after ``patience`` epochs without improvement or when
``should_stop()`` says so.
"""
from __future__ import annotations

import copy
import math
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..encoders import default_model_path, quiet_model_loading, resolve_device
from ..errors import EngineError
from ..training_config import TrainConfig
from .data import PAIR_CLASSES, PairExample

__all__ = ["EpochReport", "StepReport", "build_pair_model", "train_pair_model", "predict_classes"]


@dataclass
class EpochReport:
    """What one epoch of either stage reports (passed to the progress callback)."""

    stage: str
    epoch: int
    epochs: int
    loss: float
    dev: dict[str, float] = field(default_factory=dict)
    best: bool = False

    @property
    def dev_f1(self) -> float | None:
        """The held-out score the stage maximises."""
        return self.dev.get("f1")

    def line(self) -> str:
        """One progress line, e.g. ``crf epoch 3/50: loss 0.0412, dev F1 0.9615 (best)``."""
        extra = ", ".join(f"{k.replace('_f1', '')} {v:.4f}" for k, v in self.dev.items()
                          if k.endswith("_f1"))
        dev = f", dev F1 {self.dev_f1:.4f}" if self.dev_f1 is not None else ""
        return (f"{self.stage} epoch {self.epoch}/{self.epochs}: loss {self.loss:.4f}{dev}"
                + (f" ({extra})" if extra else "") + (" *" if self.best else ""))


@dataclass(frozen=True)
class StepReport:
    """Where training is inside a stage (passed to the ``on_step`` callback): a stage starting
    (``step`` 0) and, in the pair-model stage, every batch (``step`` of ``steps`` over all epochs)."""

    stage: str
    step: int = 0
    steps: int = 0
    epoch: int = 0
    epochs: int = 0

    @property
    def fraction(self) -> float:
        """Share of the stage done, 0…1 (0 when the stage does not count its steps)."""
        return min(1.0, self.step / self.steps) if self.steps else 0.0

    def line(self) -> str:
        """E.g. ``pair_model epoch 2/4, batch 37/120``."""
        if not self.steps:
            return self.stage
        epoch = f" epoch {self.epoch}/{self.epochs}," if self.epochs else ""
        return f"{self.stage}{epoch} batch {self.step}/{self.steps}"


def _length_grouped_sampler() -> type:
    from sentence_transformers.base.sampler import DefaultBatchSampler

    class LengthGroupedBatchSampler(DefaultBatchSampler):
        """Batches of pairs of similar length, in random order (seeded by seed + epoch).

        The collator pads every batch to its longest pair; on CPU, grouping by length roughly
        halves the time of an epoch against random batches.
        """

        chunk_batches = 8

        def __init__(self, dataset: Any, batch_size: int, drop_last: bool, **kwargs: Any) -> None:
            super().__init__(dataset, batch_size=batch_size, drop_last=drop_last, **kwargs)
            self.lengths = [len(c) + len(s) for c, s in zip(dataset["complex"], dataset["simple"])]

        def _batches(self) -> list[list[int]]:
            rng = np.random.default_rng([self.seed, self.epoch])
            order = rng.permutation(len(self.lengths))
            chunk = self.batch_size * self.chunk_batches
            batches: list[list[int]] = []
            for k in range(0, len(order), chunk):
                idx = sorted(order[k: k + chunk].tolist(), key=lambda i: self.lengths[i])
                batches += [idx[j: j + self.batch_size] for j in range(0, len(idx), self.batch_size)]
            if self.drop_last:
                batches = [b for b in batches if len(b) == self.batch_size]
            return [batches[i] for i in rng.permutation(len(batches))]

        def __iter__(self) -> Any:
            yield from self._batches()

        def __len__(self) -> int:
            n, bs = len(self.lengths), self.batch_size
            if not self.drop_last:
                return sum(math.ceil(min(bs * self.chunk_batches, n - k) / bs)
                           for k in range(0, n, bs * self.chunk_batches))
            return len(self._batches())

    return LengthGroupedBatchSampler


def build_pair_model(base: str | None, *, device: str | None, max_length: int, seed: int) -> Any:
    """A ``CrossEncoder`` with a fresh 3-class head on ``base`` (``None`` = bundled MiniLM).

    Raises:
        EngineError: ``base`` cannot be loaded.
    """
    from sentence_transformers import CrossEncoder
    from transformers import set_seed
    from transformers.utils import logging as hf_logging

    set_seed(seed)  # the head's initial weights
    quiet_model_loading()
    path = default_model_path() if base in (None, "", "all-MiniLM-L6-v2") else str(base)
    config_kwargs = {"id2label": dict(enumerate(PAIR_CLASSES)),
                     "label2id": {name: i for i, name in enumerate(PAIR_CLASSES)}}
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # not the "newly initialized: classifier" report: it is new
    try:
        return CrossEncoder(path, num_labels=len(PAIR_CLASSES), max_length=max_length,
                            device=resolve_device(device), config_kwargs=config_kwargs)
    except Exception as exc:  # the library raises many kinds (OSError, ValueError, HF errors)
        raise EngineError(f"cannot build a cross-encoder from {path!r}: {exc}") from exc
    finally:
        hf_logging.set_verbosity(verbosity)


def predict_classes(model: Any, pairs: Sequence[tuple[str, str]], batch_size: int = 64) -> np.ndarray:
    """Class probabilities ``[len(pairs), 3]`` (not_aligned, partial, aligned)."""
    import torch

    if not pairs:
        return np.zeros((0, len(PAIR_CLASSES)), dtype=np.float32)
    out = model.predict(list(pairs), batch_size=batch_size, show_progress_bar=False,
                        activation_fn=torch.nn.Softmax(dim=-1), convert_to_numpy=True)
    return np.asarray(out, dtype=np.float32).reshape(len(pairs), len(PAIR_CLASSES))


def _callback(evaluate: Callable[[], dict[str, float]], report: Callable[[EpochReport], None],
              should_stop: Callable[[], bool], epochs: int, patience: int,
              on_step: Callable[[StepReport], None] = lambda r: None) -> Any:
    from transformers import TrainerCallback

    class EpochCallback(TrainerCallback):
        """Held-out score after every epoch; keeps the best weights; early stop / cancel.

        Runs on the epoch's log event (``logging_strategy="epoch"``), which the trainer sends
        after ``on_epoch_end`` with the epoch's mean loss, and before it checks
        ``should_training_stop``.
        """

        def __init__(self) -> None:
            self.best_score = -math.inf
            self.best_state: dict[str, Any] | None = None
            self.best_epoch = 0
            self.history: list[EpochReport] = []

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> Any:
            steps = int(state.max_steps or 0)
            per_epoch = max(1, math.ceil(steps / max(1, epochs)))
            on_step(StepReport("pair_model", int(state.global_step), steps,
                               min(epochs, 1 + (int(state.global_step) - 1) // per_epoch), epochs))
            return control

        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, model: Any = None,
                   **kw: Any) -> Any:
            if not logs or "loss" not in logs:
                return control
            epoch = len(self.history) + 1
            dev = evaluate()
            score = dev.get("score", dev.get("f1", 0.0))
            better = score > self.best_score
            if better:
                self.best_score, self.best_epoch = score, epoch
                self.best_state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
            rep = EpochReport("pair_model", epoch, epochs, float(logs["loss"]), dev, better)
            self.history.append(rep)
            report(rep)
            if should_stop() or epoch - self.best_epoch >= patience:
                control.should_training_stop = True
            return control

    return EpochCallback()


def train_pair_model(
    model: Any,
    examples: Sequence[PairExample],
    cfg: TrainConfig,
    *,
    seed: int,
    evaluate: Callable[[], dict[str, float]],
    report: Callable[[EpochReport], None] = lambda r: None,
    should_stop: Callable[[], bool] = lambda: False,
    on_step: Callable[[StepReport], None] = lambda r: None,
) -> list[EpochReport]:
    """Fine-tune ``model`` on ``examples`` (cross-entropy over the 3 classes); keeps the best epoch.

    Args:
        model: from :func:`build_pair_model`.
        examples: training pairs (gold links + hard negatives).
        cfg: epochs, learning rate, batch size, warm-up, weight decay, patience, frozen
            word embeddings.
        seed: shuffling and dropout seed.
        evaluate: held-out scores after an epoch (``"score"`` or ``"f1"`` is maximised).
        report: called with an :class:`EpochReport` after every epoch.
        should_stop: polled after every epoch; ``True`` ends training (cancellation).
        on_step: called with a :class:`StepReport` after every batch.

    Returns:
        One report per epoch run; the model holds the best epoch's weights.
    """
    from datasets import Dataset
    from sentence_transformers.cross_encoder import (
        CrossEncoderTrainer,
        CrossEncoderTrainingArguments,
        losses,
    )
    from transformers import PrinterCallback

    if not examples:
        raise ValueError("no training pair for the pair model")
    data = Dataset.from_dict({"complex": [e.complex for e in examples],
                              "simple": [e.simple for e in examples],
                              "label": [e.label for e in examples]})
    callback = _callback(evaluate, report, should_stop, cfg.epochs, cfg.patience, on_step)
    embeddings = model.model.get_input_embeddings()
    embeddings.requires_grad_(not cfg.freeze_embeddings)  # the trainer skips frozen weights
    with tempfile.TemporaryDirectory(prefix="alignapp-train-") as tmp:
        args = CrossEncoderTrainingArguments(
            output_dir=tmp, num_train_epochs=cfg.epochs, per_device_train_batch_size=cfg.batch_size,
            learning_rate=cfg.lr, warmup_steps=cfg.warmup, weight_decay=cfg.weight_decay,
            seed=seed, data_seed=seed, save_strategy="no", eval_strategy="no",
            logging_strategy="epoch", report_to="none", disable_tqdm=True,
            use_cpu=resolve_device(cfg.device) == "cpu", dataloader_num_workers=0,
            batch_sampler=_length_grouped_sampler())
        trainer = CrossEncoderTrainer(model=model, args=args, train_dataset=data,
                                      loss=losses.CrossEntropyLoss(model), callbacks=[callback])
        trainer.remove_callback(PrinterCallback)  # our report() prints one line per epoch
        trainer.train()
    embeddings.requires_grad_(True)
    if callback.best_state is not None:
        model.load_state_dict(copy.deepcopy(callback.best_state))
    model.eval()
    return callback.history
