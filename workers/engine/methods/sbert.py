"""``sbert``: cosine of sentence-transformers embeddings, thresholded (paper Table 3 "BERT
embedding" row; SPEC §5.1 default similarity).

``model`` is any sentence-transformers name or local path (default: bundled all-MiniLM-L6-v2).
Rule and options: :mod:`workers.engine.threshold`, plus ``device``. Defaults for MiniLM cosine:
``partial_threshold`` 0.4, ``aligned_threshold`` 0.7 (precision ≥ 0.99 on the ASSET-based dev set).

Example:
    >>> from workers.engine.methods import get_aligner
    >>> aligner = get_aligner("sbert", {"partial_threshold": 0.5})
"""
from __future__ import annotations

from typing import Any

from ..options import Option
from ..similarity import SbertSimilarity
from ..threshold import ThresholdAligner, ThresholdConfig, threshold_params
from . import register

DEFAULTS = ThresholdConfig(partial_threshold=0.4, aligned_threshold=0.7)
PARAMS = (*threshold_params(DEFAULTS),
          Option("device", "str", None, help="torch device, e.g. cpu or cuda (default: CUDA when available)"))


@register("sbert")
class SbertAligner(ThresholdAligner):
    """Bi-encoder cosine + thresholds."""

    model_kinds = ("bi-encoder",)

    def __init__(self, config: dict[str, Any] | None = None, model: str | None = None) -> None:
        config = dict(config or {})
        device = config.pop("device", None)
        super().__init__("sbert", SbertSimilarity(model, device=device),
                         ThresholdConfig.build(DEFAULTS, config))
