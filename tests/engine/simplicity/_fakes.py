"""Test doubles: a bag-of-words 'encoder' whose cosines are easy to work out by hand.

cos(a, b) = |shared word tokens| / (‖a‖·‖b‖) with word-count vectors, e.g. "a b c d" vs "a b x"
= 2 / (2·√3) ≈ 0.577.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np


class BagOfWordsEncoder:
    dim = 2048

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}
        self.calls = 0

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w, c in Counter(t.lower().replace(".", " ").split()).items():
                j = self.vocab.setdefault(w, len(self.vocab))
                out[i, j] = c
            n = np.linalg.norm(out[i])
            if n:
                out[i] /= n
        return out
