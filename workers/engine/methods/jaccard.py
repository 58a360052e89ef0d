"""``jaccard``: word-set Jaccard coefficient (Xu et al. 2015), thresholded — a paper §4.1 similarity baseline;
the rule, its options and how the defaults were chosen: :mod:`workers.engine.threshold`."""
from __future__ import annotations

from ..threshold import ThresholdConfig, threshold_method
from . import register

JaccardAligner = register("jaccard")(threshold_method(
    "jaccard", ThresholdConfig(partial_threshold=0.15, aligned_threshold=0.4), "Word-set Jaccard coefficient (Xu et al. 2015)."))
