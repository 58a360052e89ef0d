"""The interface of every sentence similarity backend (SPEC §5.1, paper §2.2 "Semantic Similarity").

The backends and the factory :func:`~workers.engine.similarity.get_similarity` are in
:mod:`workers.engine.similarity`; the trained aligner's similarity, which wraps another backend,
in :mod:`workers.engine.pair_similarity`. Both build on this module only.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

__all__ = ["SimilarityModel"]


class SimilarityModel(ABC):
    """Interface of every backend."""

    name: str = "similarity"

    @abstractmethod
    def similarity(self, complex_sents: Sequence[str], simple_sents: Sequence[str]) -> np.ndarray:
        """Scores ``[len(complex_sents), len(simple_sents)]`` (float32)."""

    def paired(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """Scores of aligned rows ``a[k]`` vs ``b[k]`` (``len(a) == len(b)``)."""
        if len(a) != len(b):
            raise ValueError("paired() needs two lists of the same length")
        if not a:
            return np.zeros(0, dtype=np.float32)
        return np.diag(self.similarity(a, b)).astype(np.float32)

    def group_similarity(
        self, complex_groups: Sequence[Sequence[str]], simple_groups: Sequence[Sequence[str]]
    ) -> np.ndarray:
        """Score of each n:m group: its complex sentences vs its simple sentences, joined.

        The default scores the joined texts with :meth:`paired`; the bi-encoder overrides it
        with the mean of the cached sentence embeddings (no new encoding).
        """
        return self.paired([" ".join(g) for g in complex_groups],
                           [" ".join(g) for g in simple_groups])

    def __call__(self, complex_sents: Sequence[str], simple_sents: Sequence[str]) -> np.ndarray:
        return self.similarity(complex_sents, simple_sents)

    @staticmethod
    def _empty(n: int, m: int) -> np.ndarray | None:
        return np.zeros((n, m), dtype=np.float32) if n == 0 or m == 0 else None
