"""Neural CRF sentence aligner (Jiang et al. 2020, §2.2–2.3, App. A.1; SPEC §5.1).

For a simple article S = (s_1..s_m) and a complex article C = (c_1..c_n), every simple sentence
gets a label a_i ∈ {0..n} (0 = aligned to nothing). A linear-chain CRF scores a labelling by
(Eq. 1–2)::

    Ψ(a) = Σ_i ψ(a_i, a_{i-1}),   ψ(a_i, a_{i-1}) = sim(s_i, c_{a_i}) + T(a_i, a_{i-1})

* **Emission** ``sim``: ``scale · similarity(c_j, s_i)`` for j ≥ 1 from any
  :class:`~workers.engine.similarity.SimilarityModel`; the null label gets a learned constant
  ``null_score`` (the reference code scores the null label with the similarity network applied to
  an all-zero pair representation — i.e. a learned constant too). Both are trainable. By default
  the null score of a simple sentence is capped relative to its second-best similarity
  (``CRFConfig.null_margin``): a clear best match is not left unaligned for being short.
* **Transition** ``T`` (Eq. 3–4): a 2-layer feed-forward network (Linear → ReLU → Linear) over
  g1 = |a_i − a_{i−1}|, g2 = 1(a_i = 0, a_{i−1} ≠ 0), g3 = 1(a_i ≠ 0, a_{i−1} = 0),
  g4 = 1(a_i = 0, a_{i−1} = 0). When either label is null the distance is meaningless and g1 = 0
  (the paper's reference implementation likewise sets the distance feature only for two non-null
  labels and lets g2–g4 carry those transitions). The first position has no transition term.
* **Inference** (Eq. 5): Viterbi, O(m·n²), vectorised over the label axis and batched over
  article pairs (padding + masks): the only Python loop is over the m positions.
* **Learning** (Eq. 6): maximise log P(a*|S, C) = Ψ(a*) − log Σ_a exp Ψ(a), the partition function
  by the (vectorised, batched) forward algorithm; Adam.

Untrained defaults are hand-set (see :meth:`NeuralCRF.reset_to_defaults`): sequential alignment
is free, staying on the same complex sentence (a split) costs a little, every skipped complex
sentence costs ``jump_cost`` up to ``max_jump`` sentences (so reordering stays possible), and
entering or leaving the null label costs ``null_enter_cost``/``null_exit_cost``.

Example:
    >>> import numpy as np
    >>> crf = NeuralCRF()
    >>> sim = np.array([[0.9, 0.1], [0.1, 0.8], [0.0, 0.1]], dtype=np.float32)  # [n=3, m=2]
    >>> crf.decode([sim])[0].tolist()   # labels are 1-based complex indices, 0 = null
    [1, 2]
"""
from __future__ import annotations

from .model import CRFConfig, NeuralCRF, transition_features
from .reference import crf_reference_viterbi, path_score
from .training import CRFExample, gold_labels_from_links, train_crf

__all__ = [
    "CRFConfig",
    "NeuralCRF",
    "CRFExample",
    "train_crf",
    "gold_labels_from_links",
    "crf_reference_viterbi",
    "path_score",
    "transition_features",
]
