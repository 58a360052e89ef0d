"""``tfidf``: TF-IDF cosine, IDF fitted per article pair (Paetzold et al. 2017), thresholded.

A paper §4.1 similarity baseline (rule, options, defaults: :mod:`workers.engine.threshold`)."""
from __future__ import annotations

from ..threshold import ThresholdConfig, threshold_method
from . import register

TfidfAligner = register("tfidf")(threshold_method(
    "tfidf", ThresholdConfig(partial_threshold=0.2, aligned_threshold=0.5),
    "TF-IDF cosine, IDF fitted per article pair (Paetzold et al. 2017)."))
