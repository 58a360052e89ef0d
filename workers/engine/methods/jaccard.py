"""``jaccard``: Word-set Jaccard coefficient (Xu et al. 2015), thresholded.

A paper §4.1 similarity baseline. Rule and options: :mod:`workers.engine.threshold`. Defaults:
a simple sentence is linked to its best complex sentence when the score is at least 0.15
(``partial_threshold``); a group is ``aligned`` from 0.4 (``aligned_threshold``). They keep
precision ≥ 0.98 on the exhaustive ASSET-based dev set; tune them on labelled data with
:func:`workers.engine.metrics.tune_threshold`.

Example:
    >>> from workers.engine.methods import get_aligner
    >>> aligner = get_aligner("jaccard", {"partial_threshold": 0.15})
"""
from __future__ import annotations

from typing import Any

from ..similarity import JaccardSimilarity
from ..threshold import ThresholdAligner, ThresholdConfig, threshold_params
from . import register

DEFAULTS = ThresholdConfig(partial_threshold=0.15, aligned_threshold=0.4)
PARAMS = threshold_params(DEFAULTS)


@register("jaccard")
class JaccardAligner(ThresholdAligner):
    """Word-set Jaccard coefficient (Xu et al. 2015)."""

    def __init__(self, config: dict[str, Any] | None = None, model: str | None = None) -> None:
        super().__init__("jaccard", JaccardSimilarity(),
                         ThresholdConfig.build(DEFAULTS, dict(config or {})))
