"""WIVICO step-1 thresholds (Ormaechea & Tsourakis 2023, §3.2.2; SPEC §5.5).

* The 1:1 cut-off is the **mean SBERT score of the pairs annotated valid** (0.81 in the paper,
  with paraphrase-xlm-r-multilingual-v1; recalibrate for any other encoder).
* The other W_n:V_m configurations get their cut-offs by shifting the per-configuration mean
  scores with the paper's *decreasing shift*: with ``score`` the list of configuration means and
  ``s`` the 1:1 threshold,

      p          = Σ_i |(score[i+1] − score[i]) / score[i+1]| / (n − 1)
      new[0]     = score[0] + s
      new[i]     = score[i] + s · (1 − i/(n − 1)) · p          (i ≥ 1)

  :func:`decreasing_shift` is exactly that. Read literally, ``new[0]`` (mean + 0.81) is not a
  usable cosine cut-off, and the paper states the 1:1 cut-off is the valid mean itself, so
  :func:`propagate_thresholds` uses ``s`` for 1:1 and ``new[i]`` for the others (clipped to [0, 1]).
  The list is ordered 1:1 first, then by n + m, then n (Figure 3's order).

Because the literal shift for i ≥ 1 is small (s · p with p the mean relative step), the other
cut-offs end up just above each configuration's *mean over all windows*, which for a corpus of
mostly unrelated windows is far below the 1:1 cut-off. ``method="offset"`` is a documented
alternative (not the paper's): every configuration's cut-off sits as far above its own mean as
the 1:1 cut-off sits above the 1:1 mean.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = [
    "CONFIGS",
    "PAPER_VALID_THRESHOLD",
    "calibrate_label_thresholds",
    "decreasing_shift",
    "label_mean",
    "PROPAGATION_METHODS",
    "propagate_thresholds",
    "shift_proportion",
]

Config = tuple[int, int]
CONFIGS: tuple[Config, ...] = tuple(
    sorted(((n, m) for n in (1, 2, 3) for m in (1, 2, 3)), key=lambda c: (c != (1, 1), c[0] + c[1], c[0]))
)
"""The nine W_n:V_m configurations in list order: (1,1), (1,2), (2,1), (1,3), (2,2), (3,1), (2,3), (3,2), (3,3)."""

PAPER_VALID_THRESHOLD = 0.81
VALID_LABELS = ("valid", "aligned")
PARTIAL_LABELS = ("partially valid", "partially-valid", "partially_valid", "partial")


def label_mean(scores: Sequence[float], labels: Sequence[str], wanted: Sequence[str]) -> float:
    """Mean score of the pairs whose label is in ``wanted``.

    Raises:
        ValueError: lengths differ or no pair has a wanted label.
    """
    if len(scores) != len(labels):
        raise ValueError(f"{len(scores)} scores but {len(labels)} labels")
    chosen = [s for s, l in zip(scores, labels) if l.strip().lower() in wanted]
    if not chosen:
        raise ValueError(f"no pair labelled one of {list(wanted)}")
    return sum(chosen) / len(chosen)


def calibrate_label_thresholds(scores: Sequence[float], labels: Sequence[str]) -> dict[str, float]:
    """1:1 cut-offs from annotated W1:V1 pairs: ``valid`` = mean of valid (the paper's rule);
    ``partial`` = mean of partially-valid pairs (our extension for the partial label; absent when
    no pair is partially valid)."""
    out = {"valid": label_mean(scores, labels, VALID_LABELS)}
    try:
        out["partial"] = min(out["valid"], label_mean(scores, labels, PARTIAL_LABELS))
    except ValueError:
        pass
    return out


def shift_proportion(scores: Sequence[float]) -> float:
    """The paper's p: mean of |diff[i] / scores[i+1]| over adjacent elements (0 for < 2 items)."""
    n = len(scores)
    if n < 2:
        return 0.0
    ratios = [abs((scores[i + 1] - scores[i]) / scores[i + 1]) if scores[i + 1] else 0.0 for i in range(n - 1)]
    return sum(ratios) / (n - 1)


def decreasing_shift(scores: Sequence[float], s: float) -> list[float]:
    """The paper's decreasing shift of a list of mean scores, literally.

    Example:
        >>> [round(x, 4) for x in decreasing_shift([0.6, 0.5, 0.4], 0.8)]
        [1.4, 0.59, 0.4]
    """
    n = len(scores)
    if n == 0:
        return []
    if n == 1:
        return [scores[0] + s]
    p = shift_proportion(scores)
    return [scores[0] + s] + [scores[i] + s * (1 - i / (n - 1)) * p for i in range(1, n)]


PROPAGATION_METHODS = ("paper", "offset")


def propagate_thresholds(
    config_means: Mapping[Config, float],
    threshold_11: float = PAPER_VALID_THRESHOLD,
    method: str = "paper",
) -> dict[Config, float]:
    """Cut-offs for every configuration present in ``config_means`` (must include (1, 1)).

    Raises:
        ValueError: (1, 1) missing, or unknown ``method`` (valid ones listed).
    """
    if (1, 1) not in config_means:
        raise ValueError("config_means must contain the 1:1 configuration")
    if method not in PROPAGATION_METHODS:
        raise ValueError(f"unknown propagation {method!r}; choose one of: {', '.join(PROPAGATION_METHODS)}")
    order = [c for c in CONFIGS if c in config_means] + sorted(set(config_means) - set(CONFIGS))
    if method == "offset":
        gap = threshold_11 - float(config_means[(1, 1)])
        shifted = [float(config_means[c]) + gap for c in order]
    else:
        shifted = decreasing_shift([float(config_means[c]) for c in order], threshold_11)
    out = {c: float(min(1.0, max(0.0, v))) for c, v in zip(order, shifted)}
    out[(1, 1)] = threshold_11
    return out
