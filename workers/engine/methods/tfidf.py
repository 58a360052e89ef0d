"""``tfidf``: TF-IDF cosine, IDF fitted per article pair (Paetzold et al. 2017), thresholded.

A paper §4.1 similarity baseline. Rule and options: :mod:`workers.engine.threshold`. Defaults:
a simple sentence is linked to its best complex sentence when the score is at least 0.2
(``partial_threshold``); a group is ``aligned`` from 0.5 (``aligned_threshold``). They keep
precision ≥ 0.98 on the exhaustive ASSET-based dev set; tune them on labelled data with
:func:`workers.engine.metrics.tune_threshold`.

Example:
    >>> from workers.engine.methods import get_aligner
    >>> aligner = get_aligner("tfidf", {"partial_threshold": 0.2})
"""
from __future__ import annotations

from typing import Any

from ..similarity import TfidfSimilarity
from ..threshold import ThresholdAligner, ThresholdConfig, threshold_params
from . import register

DEFAULTS = ThresholdConfig(partial_threshold=0.2, aligned_threshold=0.5)
PARAMS = threshold_params(DEFAULTS)


@register("tfidf")
class TfidfAligner(ThresholdAligner):
    """TF-IDF cosine, IDF fitted per article pair (Paetzold et al. 2017)."""

    def __init__(self, config: dict[str, Any] | None = None, model: str | None = None) -> None:
        super().__init__("tfidf", TfidfSimilarity(),
                         ThresholdConfig.build(DEFAULTS, dict(config or {})))
