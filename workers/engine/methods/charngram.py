"""``charngram``: Character 3-gram log-TF-IDF cosine, CATS' C3G (Štajner et al. 2018), thresholded.

A paper §4.1 similarity baseline. Rule and options: :mod:`workers.engine.threshold`. Defaults:
a simple sentence is linked to its best complex sentence when the score is at least 0.25
(``partial_threshold``); a group is ``aligned`` from 0.5 (``aligned_threshold``). They keep
precision ≥ 0.98 on the exhaustive ASSET-based dev set; tune them on labelled data with
:func:`workers.engine.metrics.tune_threshold`.

Example:
    >>> from workers.engine.methods import get_aligner
    >>> aligner = get_aligner("charngram", {"partial_threshold": 0.25})
"""
from __future__ import annotations

from typing import Any

from ..similarity import CharNgramSimilarity
from ..threshold import ThresholdAligner, ThresholdConfig, threshold_params
from . import register

DEFAULTS = ThresholdConfig(partial_threshold=0.25, aligned_threshold=0.5)
PARAMS = threshold_params(DEFAULTS)


@register("charngram")
class CharNgramAligner(ThresholdAligner):
    """Character 3-gram log-TF-IDF cosine, CATS' C3G (Štajner et al. 2018)."""

    def __init__(self, config: dict[str, Any] | None = None, model: str | None = None) -> None:
        super().__init__("charngram", CharNgramSimilarity(),
                         ThresholdConfig.build(DEFAULTS, dict(config or {})))
