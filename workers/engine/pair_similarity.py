"""The trained aligner's similarity: a 3-class pair model on candidates (paper §2.2, §3.2).

The paper's CRF scores every (simple, complex) sentence pair with a fine-tuned BERT. A
cross-encoder reads both sentences jointly, so scoring all n·m pairs of an article costs n·m
forward passes (on a 2-core CPU about 70 pairs/s with MiniLM: 17 s for a 40 × 30 article).
Like the paper's candidate selection (§3.2), the pair model here scores only the candidates of a
cheap base similarity — the top ``k`` complex sentences of each simple sentence plus the
neighbours of the best (:func:`top_candidates`); the other pairs get
P(linked) = 0. The emission similarity given to the CRF is::

    sim(c, s) = w · P(linked | c, s) + (1 − w) · base(c, s),   P(linked) = 1 − P(not_aligned)

so the base similarity still orders the pairs the pair model did not score, and the CRF's
learned scale and null score apply to one matrix as before. :meth:`aligned_share` gives
P(aligned | linked) = P(aligned) / (P(aligned) + P(partial)) for the aligned/partial decision.

Example:
    >>> from workers.engine.similarity import get_similarity
    >>> sim = PairModelSimilarity("path/to/MODEL_DIR", base=get_similarity("combined"))  # doctest: +SKIP
    >>> sim.similarity(["The cat sat on the mat."], ["A cat sat."]).shape  # doctest: +SKIP
    (1, 1)
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .similarity_base import SimilarityModel

__all__ = ["PairModelSimilarity", "top_candidates"]

_Pair = tuple[str, str]


class PairModelSimilarity(SimilarityModel):
    """Mixed emission similarity of a trained aligner (see module docstring).

    Args:
        model: directory of the 3-class CrossEncoder (a trained MODEL_DIR), or a loaded
            ``CrossEncoder`` (training scores with the model it is fitting).
        base: the base similarity (any backend of :func:`~workers.engine.similarity.get_similarity`
            but ``pair-model``; the factory gives ``combined``).
        weight: ``w``, the weight of P(linked).
        candidates: ``k``, complex sentences scored per simple sentence.
        device: ``None`` = CUDA when available.
        batch_size: pairs per forward pass.
    """

    name = "pair-model"

    def __init__(self, model: str | Path | Any, *, base: SimilarityModel, weight: float = 0.5,
                 candidates: int = 5, device: str | None = None, batch_size: int = 64) -> None:
        from .encoders import load_cross_encoder

        if isinstance(base, PairModelSimilarity):
            raise ValueError("the base similarity of 'pair-model' cannot be 'pair-model'")
        if not 0.0 <= weight <= 1.0 or candidates < 1:
            raise ValueError("need 0 <= weight <= 1 and candidates >= 1")
        self.model = load_cross_encoder(str(model), device) if isinstance(model, (str, Path)) \
            else model
        if int(self.model.num_labels) != 3:
            raise ValueError(f"{model} is not a 3-class (not_aligned/partial/aligned) pair model")
        self.base = base
        self.weight = weight
        self.candidates = candidates
        self.batch_size = batch_size
        self._cache: dict[_Pair, np.ndarray] = {}

    def clear_cache(self) -> None:
        """Forget cached scores (after the model's weights changed)."""
        self._cache.clear()

    def probabilities(self, pairs: Iterable[_Pair]) -> np.ndarray:
        """Class probabilities ``[len(pairs), 3]`` (not_aligned, partial, aligned), cached."""
        import torch

        pairs = list(pairs)
        todo = list(dict.fromkeys(p for p in pairs if p not in self._cache))
        if todo:
            out = self.model.predict(todo, batch_size=self.batch_size, show_progress_bar=False,
                                     activation_fn=torch.nn.Softmax(dim=-1), convert_to_numpy=True)
            self._cache.update(zip(todo, np.asarray(out, dtype=np.float32).reshape(len(todo), 3)))
        if not pairs:
            return np.zeros((0, 3), dtype=np.float32)
        return np.stack([self._cache[p] for p in pairs])

    def linked(self, complex_sents: Sequence[str], simple_sents: Sequence[str],
               mask: np.ndarray) -> np.ndarray:
        """P(linked) ``[n, m]`` on the ``mask``ed pairs, 0 elsewhere."""
        out = np.zeros(mask.shape, dtype=np.float32)
        idx = list(zip(*np.nonzero(mask)))
        if idx:
            probs = self.probabilities((complex_sents[c], simple_sents[s]) for c, s in idx)
            rows, cols = np.asarray(idx).T
            out[rows, cols] = 1.0 - probs[:, 0]
        return out

    def similarity(self, complex_sents: Sequence[str], simple_sents: Sequence[str]) -> np.ndarray:
        empty = self._empty(len(complex_sents), len(simple_sents))
        if empty is not None:
            return empty
        base = self.base.similarity(complex_sents, simple_sents)
        if self.weight == 0.0:  # the emission is the base similarity: no cross-encoder pass
            return base.astype(np.float32)
        mask = top_candidates(base, self.candidates)
        linked = self.linked(complex_sents, simple_sents, mask)
        return (self.weight * linked + (1.0 - self.weight) * base).astype(np.float32)

    def paired(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        if len(a) != len(b):
            raise ValueError("paired() needs two lists of the same length")
        if not a:
            return np.zeros(0, dtype=np.float32)
        linked = 1.0 - self.probabilities(zip(a, b))[:, 0]
        return (self.weight * linked + (1.0 - self.weight) * self.base.paired(a, b)).astype(np.float32)

    def aligned_share(self, complex_sents: Sequence[str], simple_sents: Sequence[str],
                      links: Iterable[tuple[int, int]]) -> np.ndarray:
        """P(aligned | linked) ``[n, m]`` for the given links (NaN elsewhere)."""
        out = np.full((len(complex_sents), len(simple_sents)), np.nan, dtype=np.float32)
        links = list(links)
        if links:
            probs = self.probabilities((complex_sents[c], simple_sents[s]) for c, s in links)
            share = probs[:, 2] / np.maximum(probs[:, 1] + probs[:, 2], 1e-6)
            rows, cols = np.asarray(links).T
            out[rows, cols] = share
        return out


def top_candidates(sim: np.ndarray, k: int, neighbours: bool = True) -> np.ndarray:
    """Mask ``[n, m]`` of the ``k`` most similar complex sentences of every simple sentence.

    With ``neighbours`` the complex sentences right before and after each simple sentence's best
    match are added (the CRF's order prior makes them the usual confusions). The trained aligner
    scores only these pairs with its cross-encoder: with the ``combined`` similarity, ``k = 5``
    plus neighbours kept 99.4% of the gold links of the OneStop manual dev set and 100% of the
    ASSET-based one, with about 6.5 candidates per simple sentence.

    Example:
        >>> sim = np.array([[0.9, 0.1], [0.2, 0.3], [0.1, 0.8]])
        >>> top_candidates(sim, 1, neighbours=False).astype(int).tolist()
        [[1, 0], [0, 0], [0, 1]]
    """
    n, m = sim.shape
    mask = np.zeros((n, m), dtype=bool)
    if n == 0 or m == 0 or k < 1:
        return mask
    order = np.argsort(-sim, axis=0, kind="stable")
    cols = np.arange(m)
    for r in range(min(k, n)):
        mask[order[r], cols] = True
    if neighbours:
        best = order[0]
        mask[np.clip(best - 1, 0, n - 1), cols] = True
        mask[np.clip(best + 1, 0, n - 1), cols] = True
    return mask
