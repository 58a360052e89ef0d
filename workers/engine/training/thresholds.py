"""Decision values tuned on held-out articles (paper §4.3: thresholds chosen for max F1 on dev).

After the pair model and the CRF are trained, three values of the ``crf`` method are chosen on the
held-out articles — never on the training articles, whose pair-model scores are over-confident:

* ``merge_threshold`` — similarity of a secondary (merge) link (Task 1 F1);
* ``aligned_threshold`` — P(aligned | linked) from which a 1:1 group is ``aligned`` (Task 2 F1);
* ``group_aligned_threshold`` — the same for n:m groups (splits, fusions), which the annotation
  guidelines normally label ``partial``; ``NEVER`` (> 1) makes every n:m group partial.

Grids are coarse (a few held-out articles cannot tell finer values apart; steps of 0.05 for the
1:1 cut-off, whose probabilities a briefly trained pair model keeps in a narrow band) and ties go
to the prior: 0.5 for the 1:1 cut-off, "never aligned" for groups, the method default for merges.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["NEVER", "TunedThresholds", "tune_thresholds"]

from ..methods.crf import NEVER  # a cut-off above every probability: always ``partial`` / no merges

MERGE_GRID: tuple[float, ...] = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, NEVER)
ALIGNED_GRID: tuple[float, ...] = tuple(round(0.05 * k, 2) for k in range(1, 20))
GROUP_GRID: tuple[float, ...] = (0.3, 0.5, 0.7, 0.9, NEVER)


@dataclass
class TunedThresholds:
    """Chosen values and the held-out scores they reach."""

    merge_threshold: float
    aligned_threshold: float
    group_aligned_threshold: float
    task1_f1: float
    task2_f1: float
    grid: dict[str, Any] = field(default_factory=dict)

    def config(self) -> dict[str, float]:
        """The ``crf`` method options (``thresholds.json`` ``config``)."""
        return {"merge_threshold": self.merge_threshold, "aligned_threshold": self.aligned_threshold,
                "group_aligned_threshold": self.group_aligned_threshold}


def _best(scored: Sequence[tuple[float, tuple[float, ...], Any]]) -> Any:
    """The value with the highest score; ties go to the smallest prior distance."""
    return max(scored, key=lambda x: (round(x[0], 6), tuple(-d for d in x[1])))[2]


def tune_thresholds(
    scores: Callable[[dict[str, float]], dict[str, float]],
    *,
    merge_default: float = 0.4,
) -> TunedThresholds:
    """Choose the three values on held-out data.

    Args:
        scores: held-out ``{"task1_f1", "task2_f1"}`` of the aligner with the given options
            (decoding is cheap; the pair model's scores are cached).
        merge_default: the prior for ``merge_threshold`` (ties).

    Example:
        >>> def fake(opts):  # Task 2 peaks at aligned_threshold 0.7, groups never aligned
        ...     return {"task1_f1": 0.9, "task2_f1": 1 - abs(opts["aligned_threshold"] - 0.7)
        ...             - 0.1 * (opts["group_aligned_threshold"] < 1)}
        >>> t = tune_thresholds(fake)
        >>> t.merge_threshold, t.aligned_threshold, t.group_aligned_threshold
        (0.4, 0.7, 1.01)
    """
    base = {"merge_threshold": merge_default, "aligned_threshold": 0.5,
            "group_aligned_threshold": NEVER}
    merge_scores = []
    for m in MERGE_GRID:
        r = scores({**base, "merge_threshold": m})
        merge_scores.append((r["task1_f1"], (abs(m - merge_default),), m))
    merge = _best(merge_scores)
    label_scores = []
    for a in ALIGNED_GRID:
        for g in GROUP_GRID:
            r = scores({**base, "merge_threshold": merge, "aligned_threshold": a,
                        "group_aligned_threshold": g})
            label_scores.append((r["task2_f1"], (abs(a - 0.5), NEVER - g), (a, g, r)))
    aligned, group, best = _best(label_scores)
    return TunedThresholds(
        merge_threshold=merge, aligned_threshold=aligned, group_aligned_threshold=group,
        task1_f1=float(best["task1_f1"]), task2_f1=float(best["task2_f1"]),
        grid={"merge_threshold": [[m, round(f, 4)] for f, _, m in merge_scores],
              "aligned_x_group": [[a, g, round(f, 4)] for f, _, (a, g, _r) in label_scores]})
