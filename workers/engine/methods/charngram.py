"""``charngram``: character 3-gram log-TF-IDF cosine, CATS' C3G (Štajner et al. 2018).

Thresholded like the other paper §4.1 baselines: see :mod:`workers.engine.threshold` for the rule, the
options and how its defaults (0.25 to link, 0.5 for aligned) were chosen."""
from __future__ import annotations

from ..threshold import ThresholdConfig, threshold_method
from . import register

CharNgramAligner = register("charngram")(threshold_method(
    "charngram", ThresholdConfig(partial_threshold=0.25, aligned_threshold=0.5),
    "Character 3-gram log-TF-IDF cosine, CATS' C3G (Štajner et al. 2018)."))
