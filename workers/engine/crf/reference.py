"""A plain-loop Viterbi (the paper's reference implementation) and path scores, the baseline the
vectorised :func:`workers.engine.crf.chain.viterbi` is tested and benchmarked against."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["crf_reference_viterbi", "path_score"]


def crf_reference_viterbi(
    emissions: np.ndarray, transitions: np.ndarray, *, python_lists: bool = False
) -> list[int]:
    """Straightforward Viterbi with Python loops over positions and states (speed baseline).

    Mirrors the paper's reference implementation (``aligner/model.py`` of chaojiang06/wiki-auto,
    ``viterbi_decoder``): for every position, every current state and every previous state one
    scalar update on NumPy score tables (``T1``/``T2``). ``python_lists=True`` runs the same loops
    on plain Python lists, a faster pure-Python variant. ``emissions`` is ``[m, L]``,
    ``transitions`` ``[L, L]`` (prev, cur). Ties go to the lowest state, like ``torch.max``
    usually does; compare path scores (:func:`path_score`) rather than labels when scores tie.
    """
    m = len(emissions)
    if m == 0:
        return []
    L = len(emissions[0])
    if python_lists:
        em = np.asarray(emissions, dtype=np.float64).tolist()
        tr = np.asarray(transitions, dtype=np.float64).tolist()
        T1 = [[0.0] * L for _ in range(m)]
        T2 = [[0] * L for _ in range(m)]
    else:
        em = np.asarray(emissions, dtype=np.float64)
        tr = np.asarray(transitions, dtype=np.float64)
        T1 = np.zeros((m, L), dtype=float)
        T2 = np.zeros((m, L), dtype=int)
    for j in range(L):
        T1[0][j] = em[0][j]
    for i in range(1, m):
        for j in range(L):
            max_val = -math.inf
            for k in range(L):
                cur_val = T1[i - 1][k] + tr[k][j] + em[i][j]
                if cur_val > max_val:
                    T1[i][j] = cur_val
                    T2[i][j] = k
                    max_val = cur_val
    max_val, max_idx = -math.inf, -1
    for j in range(L):
        if T1[m - 1][j] > max_val:
            max_idx, max_val = j, T1[m - 1][j]
    path = [max_idx]
    for i in range(m - 1, 0, -1):
        max_idx = int(T2[i][max_idx])
        path.append(max_idx)
    return [int(x) for x in path[::-1]]


def path_score(emissions: np.ndarray, transitions: np.ndarray, labels: Sequence[int]) -> float:
    """Ψ(a) of a label sequence under ``[m, L]`` emissions and ``[L, L]`` transitions."""
    if len(labels) == 0:
        return 0.0
    s = float(emissions[0, labels[0]])
    for i in range(1, len(labels)):
        s += float(transitions[labels[i - 1], labels[i]] + emissions[i, labels[i]])
    return s
