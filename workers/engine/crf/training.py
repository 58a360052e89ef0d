"""Training the CRF on gold labellings: maximum likelihood with Adam (Jiang et al. 2020, Eq. 6)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from .model import NeuralCRF

__all__ = ["CRFExample", "gold_labels_from_links", "train_crf"]


@dataclass
class CRFExample:
    """One training article pair: similarity ``[n, m]`` and gold labels ``[m]`` (0 = null)."""

    sim: np.ndarray
    labels: np.ndarray
    id: str = ""
    meta: dict[str, object] = field(default_factory=dict)


def gold_labels_from_links(
    links: Sequence[tuple[int, int]], n_complex: int, n_simple: int,
    sim: np.ndarray | None = None,
) -> np.ndarray:
    """CRF labels from gold ``(ci, si)`` links: a_i = 1 + the complex sentence of s_i.

    A simple sentence linked to several complex sentences (a merge) takes the most similar one
    (by ``sim``, else the first in document order); unlinked sentences get 0.
    """
    labels = np.zeros(n_simple, dtype=np.int64)
    best: dict[int, float] = {}
    for ci, si in sorted(links):
        if not (0 <= ci < n_complex and 0 <= si < n_simple):
            raise ValueError(f"gold link {(ci, si)} out of range")
        s = float(sim[ci, si]) if sim is not None else -float(ci)
        if si not in best or s > best[si]:
            best[si] = s
            labels[si] = ci + 1
    return labels


def train_crf(
    model: NeuralCRF,
    examples: Sequence[CRFExample],
    *,
    epochs: int = 30,
    lr: float = 0.02,
    batch_size: int = 8,
    weight_decay: float = 0.0,
    seed: int = 0,
    progress: Callable[[float, str], None] | None = None,
    on_epoch: Callable[[int, float], bool | None] | None = None,
) -> list[float]:
    """Maximise Σ log P(a*|S, C) over ``examples`` with Adam (Eq. 6); returns mean NLL per epoch.

    ``on_epoch(epoch, nll_per_sentence)`` is called after every epoch with the model in eval
    mode (to score held-out data, keep the best weights); returning ``True`` stops training.

    Example:
        >>> import numpy as np
        >>> ex = [CRFExample(np.eye(3, dtype=np.float32), np.array([1, 2, 3]))]
        >>> losses = train_crf(NeuralCRF(), ex, epochs=5)
        >>> losses[-1] <= losses[0]
        True
    """
    usable = [e for e in examples if e.sim.shape[1] > 0]
    if not usable:
        raise ValueError("no training example with at least one simple sentence")
    for e in usable:
        if len(e.labels) != e.sim.shape[1] or (len(e.labels) and
                                               (e.labels.min() < 0 or e.labels.max() > e.sim.shape[0])):
            raise ValueError(f"example {e.id!r}: labels do not fit its similarity matrix")
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    rng = np.random.default_rng(seed)
    history: list[float] = []
    model.train()
    total_sents = sum(len(e.labels) for e in usable)
    for ep in range(epochs):
        order = rng.permutation(len(usable))
        tot = 0.0
        for k in range(0, len(order), batch_size):
            batch = [usable[i] for i in order[k: k + batch_size]]
            ll = model.log_likelihood([e.sim for e in batch], [e.labels for e in batch])
            loss = -ll.sum() / max(1, sum(len(e.labels) for e in batch))
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += float(-ll.sum().detach())
        history.append(tot / max(1, total_sents))
        if progress is not None:
            progress((ep + 1) / epochs, f"epoch {ep + 1}/{epochs}: nll/sentence {history[-1]:.4f}")
        if on_epoch is not None:
            model.eval()
            stop = on_epoch(ep + 1, history[-1])
            model.train()
            if stop:
                break
    model.eval()
    model._feat_cache.clear()
    return history
