"""Shared implementation of the plain similarity-threshold aligners (paper §4.1, item 1).

For each simple sentence s, the most similar complex sentence c* is linked when
``sim(c*, s) >= partial_threshold``; other complex sentences are linked too when they are within
``margin`` of the best and also above ``partial_threshold`` (at most ``max_complex`` per simple
sentence) — this is how a plain threshold method can find merges (several complex → one simple).
Splits (one complex → several simple) come out because several simple sentences can pick the
same complex sentence. Links are grouped with :func:`~workers.engine.grouping.group_links`, and a
group is ``aligned`` when its joined-text similarity reaches ``aligned_threshold``, else
``partial``.

The lexical baselines (``jaccard``, ``tfidf``, ``charngram``: paper §4.1) are each one module that registers
:func:`threshold_method` with its similarity backend and defaults: the cut-offs at which a simple sentence is
linked (``partial_threshold``) and a group is ``aligned`` (``aligned_threshold``), chosen to keep precision
≥ 0.98 on the exhaustive ASSET-based dev set; tune them on labelled data with
:func:`workers.engine.metrics.tune_threshold`.

Example:
    >>> from workers.engine.methods import get_aligner
    >>> get_aligner("jaccard", {"partial_threshold": 0.15}).config.partial_threshold
    0.15
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .grouping import group_links, label_groups
from .options import Option, OptionError, build_config
from .similarity import SimilarityModel
from .types import Alignment, ArticlePair

__all__ = ["ThresholdConfig", "ThresholdAligner", "threshold_links", "threshold_method", "threshold_params"]


@dataclass
class ThresholdConfig:
    """Options of a threshold aligner (every key can be given in the method's ``config``)."""

    partial_threshold: float
    aligned_threshold: float
    margin: float = 0.05
    max_complex: int = 2

    @classmethod
    def build(cls, defaults: ThresholdConfig, config: dict[str, Any]) -> ThresholdConfig:
        """``defaults`` with ``config`` checked against :func:`threshold_params` (an
        :class:`~workers.engine.options.OptionError`, a ``ValueError``, names every bad key)."""
        schema = threshold_params(defaults)
        out = build_config(cls, "threshold method", schema, config)
        if out.partial_threshold > out.aligned_threshold:
            raise OptionError("threshold method", {"partial_threshold": f"must be <= aligned_threshold "
                                                   f"({out.aligned_threshold:g}), got {out.partial_threshold!r}"}, schema)
        return out


def threshold_params(defaults: ThresholdConfig) -> tuple[Option, ...]:
    """The option schema of a threshold method with these defaults (its module's ``PARAMS``)."""
    return (
        Option("partial_threshold", "float", defaults.partial_threshold, 0.0, 1.0,
               "a simple sentence is linked to its best complex sentence from this similarity"),
        Option("aligned_threshold", "float", defaults.aligned_threshold, 0.0, 1.0,
               "a group is 'aligned' from this joined-text similarity (else 'partial')"),
        Option("margin", "float", defaults.margin, 0.0, 1.0,
               "other complex sentences within this margin of the best are linked too (merges)"),
        Option("max_complex", "int", defaults.max_complex, 1, 10, "most complex sentences per simple sentence"),
    )


def threshold_links(sim: np.ndarray, cfg: ThresholdConfig) -> list[tuple[int, int]]:
    """Links chosen by the rule of the module docstring from a ``[n, m]`` similarity."""
    n, m = sim.shape
    links: list[tuple[int, int]] = []
    if n == 0 or m == 0:
        return links
    order = np.argsort(-sim, axis=0, kind="stable")
    for s in range(m):
        best = sim[order[0, s], s]
        if best < cfg.partial_threshold:
            continue
        for r in range(min(cfg.max_complex, n)):
            c = int(order[r, s])
            v = sim[c, s]
            if r > 0 and (v < cfg.partial_threshold or v < best - cfg.margin):
                break
            links.append((c, s))
    return links


class ThresholdAligner:
    """A similarity backend + :class:`ThresholdConfig`; implements the method protocol. A threshold calibrated
    on labels sets its two cut-offs (:class:`~workers.engine.methods.MethodFacts`)."""

    calibrated_options: ClassVar[Mapping[str, str]] = {"aligned": "aligned_threshold", "partial": "partial_threshold"}
    calibrated_partial_capped: ClassVar[bool] = True  # partial_threshold <= aligned_threshold

    def __init__(self, name: str, similarity: SimilarityModel, config: ThresholdConfig) -> None:
        self.name = name
        self.similarity = similarity
        self.config = config

    def align(self, pairs: Sequence[ArticlePair], progress: Any = None) -> list[Alignment]:
        out = []
        for k, pair in enumerate(pairs):
            cs, ss = pair.complex.sentences, pair.simple.sentences
            sim = self.similarity.similarity(cs, ss)
            groups = group_links(threshold_links(sim, self.config))
            aligned = label_groups(groups, cs, ss, sim, self.similarity,
                                   self.config.aligned_threshold)
            out.append(Alignment(pair.id, aligned, meta={"method": self.name}))
            if progress is not None:
                progress((k + 1) / len(pairs), f"aligned {k + 1}/{len(pairs)} article pairs")
        return out


def threshold_method(name: str, defaults: ThresholdConfig, doc: str) -> type[ThresholdAligner]:
    """A method class thresholding the similarity backend ``name`` (:func:`~workers.engine.similarity.get_similarity`)
    with these defaults; its option schema is ``PARAMS`` (:func:`threshold_params`). A method module registers it."""
    from .similarity import get_similarity

    class Method(ThresholdAligner):
        __doc__ = doc
        PARAMS = threshold_params(defaults)

        def __init__(self, config: dict[str, Any] | None = None, model: str | None = None) -> None:
            super().__init__(name, get_similarity(name), ThresholdConfig.build(defaults, dict(config or {})))

    Method.__name__ = Method.__qualname__ = f"{name.title()}Aligner"
    return Method
