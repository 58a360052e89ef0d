"""The CRF stage: maximum likelihood on the gold alignments (paper §2.3, Eq. 6).

The emission scale, the null score and the transition FFNN of :class:`~workers.engine.crf.NeuralCRF`
are fitted on the training articles with the trained pair model's similarity (the paper trains its
CRF on the fine-tuned BERT's scores). Training starts from the hand-set defaults, so with little
data it stays close to a working aligner. After every epoch the held-out articles are decoded: the
epoch with the best held-out Task 1 F1 is kept (ties: the lower held-out NLL).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..crf import CRFExample, NeuralCRF, gold_labels_from_links, train_crf
from ..types import ArticlePair
from .pair_model import EpochReport

__all__ = ["crf_examples", "heldout_nll", "fit_crf"]


def crf_examples(pairs: Sequence[ArticlePair], sims: Sequence[np.ndarray]) -> list[CRFExample]:
    """One :class:`CRFExample` (similarity, gold labels a*) per article pair."""
    return [CRFExample(s, gold_labels_from_links(p.gold or (), len(p.complex), len(p.simple), s),
                       id=p.id) for p, s in zip(pairs, sims)]


def heldout_nll(crf: NeuralCRF, examples: Sequence[CRFExample]) -> float:
    """Mean −log P(a*|S, C) per simple sentence (0 when there is nothing to score)."""
    import torch

    usable = [e for e in examples if e.sim.shape[1] > 0]
    if not usable:
        return 0.0
    with torch.no_grad():
        ll = crf.log_likelihood([e.sim for e in usable], [e.labels for e in usable])
    return float(-ll.sum()) / sum(len(e.labels) for e in usable)


def fit_crf(
    crf: NeuralCRF,
    train: Sequence[CRFExample],
    heldout: Sequence[CRFExample],
    dev_scores: Callable[[NeuralCRF], dict[str, float]],
    *,
    epochs: int,
    lr: float,
    seed: int,
    report: Callable[[EpochReport], None] = lambda r: None,
    should_stop: Callable[[], bool] = lambda: False,
) -> list[EpochReport]:
    """Train ``crf`` in place on ``train``; keep the epoch with the best held-out score.

    Args:
        crf: the model to train (hand-set defaults or a loaded one).
        train, heldout: examples of the training and held-out articles.
        dev_scores: held-out scores of the current CRF (``"f1"`` = Task 1 F1 is maximised).
        epochs, lr, seed: :func:`~workers.engine.crf.train_crf` settings.
        report: called with an :class:`EpochReport` after every epoch.
        should_stop: polled after every epoch (cancellation).

    Returns:
        One report per epoch (the first, epoch 0, is the untrained CRF).
    """
    import torch

    torch.manual_seed(seed)
    history: list[EpochReport] = []
    best: dict[str, Any] = {}

    def consider(epoch: int, loss: float) -> bool:
        dev = dict(dev_scores(crf))
        dev["nll"] = heldout_nll(crf, heldout)
        key = (round(dev.get("f1", 0.0), 6), -dev["nll"])
        better = not best or key > best["key"]
        if better:
            best.update(key=key, epoch=epoch,
                        state={k: v.detach().clone() for k, v in crf.state_dict().items()})
        rep = EpochReport("crf", epoch, epochs, loss, dev, better)
        history.append(rep)
        report(rep)
        return should_stop()

    crf.eval()
    consider(0, heldout_nll(crf, train))
    if epochs > 0 and not should_stop():
        train_crf(crf, train, epochs=epochs, lr=lr, seed=seed, on_epoch=consider)
    crf.load_state_dict(best["state"])
    crf.eval()
    crf._feat_cache.clear()
    return history
