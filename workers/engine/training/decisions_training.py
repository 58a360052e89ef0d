"""The last training stage (issue 21): how much to trust the pair model, and how to label a group.

Chosen on the held-out training articles only, with ties going to what the untrained aligner does:

1. **Emission weight** ``w`` of the pair model in ``w·P(linked) + (1 − w)·base`` (the base being the
   untrained aligner's similarity). ``w`` is capped by the amount of training data —
   ``n / (n + WEIGHT_HALF)`` for ``n`` training articles — so a model trained on a few articles
   stays close to the base similarity; for each allowed ``w`` the CRF is fitted (Eq. 6) and the merge
   cut-off tuned, and the ``w`` with the best held-out Task 1 F1 is kept (ties: the smaller).
2. **Label rule**, by held-out Task 2 F1 among: the untrained similarity rule (no cut-off tuned:
   the prior), the learnt group labeller with and without the pair model's P(aligned | linked), and
   the pair model's P(aligned | linked) alone (:mod:`workers.engine.decisions`); the cut-offs of the
   last three are tuned on the held-out articles (the labeller's near 0.5 only). Ties go to the
   earlier in that list. A chosen labeller is then refitted on the groups of all the training
   articles, held-out ones included (its cut-offs stay as tuned).
3. **Domain profile** of all the training articles (:class:`~workers.engine.decisions.DomainProfile`).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..crf import NeuralCRF
from ..decisions import GROUP_FEATURES, Decisions, DomainProfile, GroupLabeller, article_profile, group_features
from ..methods.crf import CRFAligner
from ..metrics import evaluate
from ..pair_similarity import PairModelSimilarity
from ..types import ArticlePair
from .crf_training import crf_examples, fit_crf
from .data import ALIGNED, NOT_ALIGNED, PairExample, gold_label_map
from .thresholds import ALIGNED_GRID, GROUP_GRID, MERGE_GRID

__all__ = ["WEIGHT_GRID", "WEIGHT_HALF", "weight_cap", "heldout_scores", "FinalDecisions", "fit_final"]

WEIGHT_GRID: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
WEIGHT_HALF = 6
"""Training articles at which the pair model may have half the emission weight."""
SIMILARITY_RULE_CUT = 0.6  # the untrained aligner's aligned_threshold
LABELLER_GRID: tuple[float, ...] = (0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65)
"""The labeller's 1:1 cut-offs: its output is a probability, so only values near 0.5 are tried — on the
OneStop folds a free choice on two held-out articles over-fitted them (pooled Task 2 0.926 vs 0.942)."""


def weight_cap(n_train: int) -> float:
    """Largest pair-model weight allowed with ``n_train`` training articles.

    Example:
        >>> weight_cap(2), weight_cap(6), round(weight_cap(30), 2)
        (0.25, 0.5, 0.83)
    """
    return n_train / (n_train + WEIGHT_HALF)


@dataclass
class FinalDecisions:
    """What :func:`fit_final` chose, ready to save."""

    aligner: CRFAligner
    crf_history: list[Any]
    config: dict[str, Any]  # thresholds.json "config": the crf options the choices set
    decisions: Decisions
    heldout: dict[str, float]  # held-out Task 1 / Task 2 F1 of the chosen aligner
    report: dict[str, Any] = field(default_factory=dict)


def heldout_scores(aligner: CRFAligner, pairs: Sequence[ArticlePair], sims: Sequence[np.ndarray]) -> dict[str, float]:
    """Task 1 / Task 2 F1 of ``aligner`` decoding the given similarity matrices."""
    r = evaluate(aligner.align_with_sims(pairs, sims), pairs)
    return {"task1_f1": float(r["task1"]["f1"]), "task2_f1": float(r["task2"]["f1"])}  # type: ignore[index]


def _best(options: Sequence[tuple[float, Any]]) -> Any:
    """The option with the highest score; ties go to the earliest."""
    top = max(round(score, 6) for score, _ in options)
    return next(value for score, value in options if round(score, 6) == top)


def _fit_weight(aligner_config: dict[str, Any], sim: PairModelSimilarity, w: float,
                train: Sequence[ArticlePair], held: Sequence[ArticlePair], epochs: int, lr: float,
                seed: int) -> tuple[float, CRFAligner, list[Any], list[np.ndarray]]:
    """CRF and merge cut-off for emission weight ``w``; returns held-out Task 1 and the parts."""
    sim.weight = w
    train_sims = [sim.similarity(p.complex.sentences, p.simple.sentences) for p in train]
    held_sims = [sim.similarity(p.complex.sentences, p.simple.sentences) for p in held]
    crf = NeuralCRF()
    aligner = CRFAligner({**aligner_config, "pair_model_weight": w, "label_rule": "similarity",
                          "aligned_threshold": SIMILARITY_RULE_CUT}, similarity=sim, crf=crf)

    def dev(_: NeuralCRF) -> dict[str, float]:
        return {"f1": heldout_scores(aligner, held, held_sims)["task1_f1"]}

    history = fit_crf(crf, crf_examples(train, train_sims), crf_examples(held, held_sims), dev,
                      epochs=epochs, lr=lr, seed=seed)
    merges = []
    for m in MERGE_GRID:
        aligner.config = replace(aligner.config, merge_threshold=m)
        merges.append((heldout_scores(aligner, held, held_sims)["task1_f1"], m))
    merge = _best(sorted(merges, key=lambda x: abs(x[1] - 0.4)))  # ties: the method default
    aligner.config = replace(aligner.config, merge_threshold=merge)
    return heldout_scores(aligner, held, held_sims)["task1_f1"], aligner, history, held_sims


def _group_rows(aligner: CRFAligner, pairs: Sequence[ArticlePair], sims: Sequence[np.ndarray],
                extra: Sequence[PairExample], sim: PairModelSimilarity) -> tuple[list[dict], list[bool]]:
    """Features and aligned-or-not of the groups the aligner decodes on ``pairs`` (a group is
    aligned when most of its links are gold ``aligned``), plus the ``extra`` labelled pairs as
    1:1 groups (their ``not`` pairs are left out: the labeller only labels linked groups)."""
    rows, aligned = [], []
    with_prob = replace(aligner.config, label_rule="pair_model")
    saved, aligner.config = aligner.config, with_prob
    try:
        alignments = aligner.align_with_sims(pairs, sims)
    finally:
        aligner.config = saved
    for pair, alignment in zip(pairs, alignments):
        gold = gold_label_map(pair)
        for g in alignment.pairs:
            rows.append(group_features([pair.complex.sentences[c] for c in g.complex],
                                       [pair.simple.sentences[s] for s in g.simple], g.features))
            links = g.links()
            aligned.append(2 * sum(gold.get(link) == ALIGNED for link in links) > len(links))
    linked = [e for e in extra if e.label != NOT_ALIGNED]
    if linked:
        emission = sim.paired([e.complex for e in linked], [e.simple for e in linked])
        probs = sim.probabilities((e.complex, e.simple) for e in linked)
        share = probs[:, 2] / np.maximum(probs[:, 1] + probs[:, 2], 1e-6)
        for e, s, p in zip(linked, emission, share):
            scores = {"group_sim": float(s), "sim_max": float(s), "sim_mean": float(s), "p_aligned": float(p)}
            rows.append(group_features([e.complex], [e.simple], scores))
            aligned.append(e.label == ALIGNED)
    return rows, aligned


def _tune_cuts(aligner: CRFAligner, held: Sequence[ArticlePair], held_sims: Sequence[np.ndarray],
               base: dict[str, Any], grid: Sequence[float] = ALIGNED_GRID) -> tuple[float, dict[str, Any]]:
    """Best held-out Task 2 over the 1:1 × n:m cut-off grid (ties: 0.5 and never for n:m)."""
    options = []
    for g in sorted(GROUP_GRID, key=lambda g: -g):
        for a in sorted(grid, key=lambda a: abs(a - 0.5)):
            opts = {**base, "aligned_threshold": a, "group_aligned_threshold": g}
            aligner.config = replace(aligner.config, **opts)
            options.append((heldout_scores(aligner, held, held_sims)["task2_f1"], opts))
    best = _best(options)
    return max(score for score, _ in options), best


def _choose_label_rule(aligner: CRFAligner, sim: PairModelSimilarity, train: Sequence[ArticlePair],
                       held: Sequence[ArticlePair], held_sims: Sequence[np.ndarray],
                       extra: Sequence[PairExample]) -> tuple[dict[str, Any], GroupLabeller | None, dict]:
    train_sims = [sim.similarity(p.complex.sentences, p.simple.sentences) for p in train]
    rows, aligned = _group_rows(aligner, train, train_sims, extra, sim)
    options: list[tuple[float, tuple[str, dict[str, Any], GroupLabeller | None]]] = []
    prior = {"label_rule": "similarity", "aligned_threshold": SIMILARITY_RULE_CUT, "group_aligned_threshold": None}
    aligner.config = replace(aligner.config, **prior)
    options.append((heldout_scores(aligner, held, held_sims)["task2_f1"], ("similarity", prior, None)))
    for name, features in (("learnt", [f for f in GROUP_FEATURES if f != "p_aligned"]),
                           ("learnt+pair_model", list(GROUP_FEATURES))):
        labeller = GroupLabeller.fit(rows, aligned, features)
        if labeller is None:
            continue
        aligner.decisions = Decisions(labeller)
        score, opts = _tune_cuts(aligner, held, held_sims, {"label_rule": "learnt"}, LABELLER_GRID)
        options.append((score, (name, opts, features)))
    aligner.decisions = None
    score, opts = _tune_cuts(aligner, held, held_sims, {"label_rule": "pair_model"})
    options.append((score, ("pair_model", opts, None)))
    name, opts, features = _best(options)
    labeller = None
    if name.startswith("learnt"):  # cut-offs chosen; the labeller now learns from every training article
        more, more_aligned = _group_rows(aligner, held, held_sims, [], sim)
        rows, aligned = rows + more, aligned + more_aligned
        labeller = GroupLabeller.fit(rows, aligned, features)
    report = {"chosen": name, "heldout_task2": {n: round(s, 4) for s, (n, _, _) in options},
              "labeller_rows": len(rows), "labeller_aligned_share": round(float(np.mean(aligned)), 4) if aligned else None}
    return opts, labeller, report


def fit_final(aligner_config: dict[str, Any], sim: PairModelSimilarity, train: Sequence[ArticlePair],
              held: Sequence[ArticlePair], all_pairs: Sequence[ArticlePair], extra: Sequence[PairExample],
              *, epochs: int, lr: float, seed: int,
              step: Callable[[str], None] = lambda stage: None) -> FinalDecisions:
    """Stages 1–3 of the module docstring on the trained pair model ``sim``."""
    step("crf")
    cap = weight_cap(len(train))
    tried = []
    for w in (w for w in WEIGHT_GRID if w <= cap + 1e-9):
        tried.append((w, _fit_weight(aligner_config, sim, w, train, held, epochs, lr, seed)))
    w, (_, aligner, history, held_sims) = _best([(res[0], (w, res)) for w, res in tried])
    sim.weight = w
    step("thresholds")
    opts, labeller, label_report = _choose_label_rule(aligner, sim, train, held, held_sims, extra)
    domain = DomainProfile.fit([article_profile(p, sim.base) for p in all_pairs])
    decisions = Decisions(labeller, domain, {"label_rule": label_report["chosen"]})
    aligner.config = replace(aligner.config, **opts)
    aligner.decisions = decisions
    config = {"pair_model_weight": w, "merge_threshold": aligner.config.merge_threshold, **opts}
    report = {"pair_model_weight": w, "weight_cap": round(cap, 4),
              "weight_heldout_task1": [[wt, round(res[0], 4)] for wt, res in tried],
              "label_rule": label_report, "domain": {"ranges": domain.ranges, "margin": domain.margin}}
    return FinalDecisions(aligner, history, config, decisions, heldout_scores(aligner, held, held_sims), report)
