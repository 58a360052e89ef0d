"""What a trained aligner learns on top of its similarity: the aligned/partial decision of a group,
and where its training applies (issue 21).

**Group labeller.** The neural CRF paper labels a link aligned or partial with its fine-tuned
classifier (§2.2). On the OneStop dev gold most of the errors of that decision are partial pairs
called aligned, and what separates them is what a reader looks at: the group's shape (1:1 or a
split/fusion, which the annotation guidelines normally call partial), how much shorter the simple
side is, and how much of the complex side's content the simple side keeps. :class:`GroupLabeller`
is a logistic regression over those features of a decoded group (:func:`group_features`) plus the
similarities the CRF used and, when the model has one, the pair model's P(aligned | linked). It is
fitted on the training articles' decoded groups; its cut-off is tuned on held-out articles.

**Domain profile.** A model trained on one style of corpus can hurt on another: the OneStop
(news levels) labeller calls half of the ASSET-based pairs partial, because ASSET's gold counts a
split as aligned. :class:`DomainProfile` keeps, per training article, statistics that tell corpora
apart without gold — how related neighbouring sentences are on each side (real articles vs.
sentence collections) and the share of simple to complex sentences — and an article pair outside
the training range (widened by a margin) is aligned as the untrained aligner aligns it.
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .similarity_base import SimilarityModel
from .types import ArticlePair

__all__ = ["GROUP_FEATURES", "group_features", "GroupLabeller", "article_profile", "DomainProfile",
           "Decisions"]

GROUP_FEATURES: tuple[str, ...] = (
    "one_to_one", "n_complex", "n_simple", "log_length_ratio", "complex_kept", "simple_from_complex",
    "group_sim", "sim_max", "sim_mean", "p_aligned")
"""Features of a group, in the order the labeller's coefficients follow (``p_aligned`` only for a
model with a pair model)."""

_WORD = re.compile(r"\w+", re.UNICODE)


def _content_words(text: str) -> set[str]:
    """Lower-cased words of four or more letters, or with a digit: a language-neutral stand-in for
    content words (no stop-word list to ship per language)."""
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 4 or any(ch.isdigit() for ch in w)}


def group_features(complex_texts: Sequence[str], simple_texts: Sequence[str],
                   scores: dict[str, float]) -> dict[str, float]:
    """The labeller's features of one group: its sentences' texts and the similarities
    (``group_sim``, ``sim_max``, ``sim_mean``, optionally ``p_aligned``) the aligner computed.

    Example:
        >>> f = group_features(["The mayor said on Monday that the plan would cost 5 million."],
        ...                    ["The plan would cost 5 million."], {"group_sim": 0.8})
        >>> f["one_to_one"], round(f["complex_kept"], 2), f["simple_from_complex"]
        (1.0, 0.56, 1.0)
    """
    c_text, s_text = " ".join(complex_texts), " ".join(simple_texts)
    c_words, s_words = _content_words(c_text), _content_words(s_text)
    n_c, n_s = len(_WORD.findall(c_text)), len(_WORD.findall(s_text))
    shared = len(c_words & s_words)
    out = {"one_to_one": float(len(complex_texts) == 1 and len(simple_texts) == 1),
           "n_complex": float(len(complex_texts)), "n_simple": float(len(simple_texts)),
           "log_length_ratio": math.log((n_s + 1) / (n_c + 1)),
           "complex_kept": shared / len(c_words) if c_words else 1.0,
           "simple_from_complex": shared / len(s_words) if s_words else 1.0}
    for name in ("group_sim", "sim_max", "sim_mean", "p_aligned"):
        if name in scores:
            out[name] = float(scores[name])
    return out


@dataclass
class GroupLabeller:
    """Logistic regression P(aligned | group features) (standardised features, L2)."""

    features: list[str]
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float

    def matrix(self, rows: Sequence[dict[str, float]]) -> np.ndarray:
        """Rows as a ``[len(rows), len(features)]`` array (a missing feature is an error)."""
        try:
            return np.array([[row[name] for name in self.features] for row in rows], dtype=np.float64)
        except KeyError as exc:
            raise ValueError(f"group features lack {exc.args[0]!r}; the labeller needs {self.features}") from None

    def probability(self, rows: Sequence[dict[str, float]]) -> np.ndarray:
        """P(aligned) per row."""
        if not rows:
            return np.zeros(0)
        z = (self.matrix(rows) - np.asarray(self.mean)) / np.asarray(self.scale)
        return 1.0 / (1.0 + np.exp(-(z @ np.asarray(self.coef) + self.intercept)))

    @classmethod
    def fit(cls, rows: Sequence[dict[str, float]], aligned: Sequence[bool], features: Sequence[str],
            c: float = 1.0) -> GroupLabeller | None:
        """Fitted on groups labelled aligned (``True``) or not; ``None`` without both classes."""
        from sklearn.linear_model import LogisticRegression

        y = np.asarray(aligned, dtype=int)
        if len(rows) < 2 or y.min() == y.max():
            return None
        stub = cls(list(features), [], [], [], 0.0)
        x = stub.matrix(rows)
        mean, scale = x.mean(axis=0), x.std(axis=0)
        scale[scale < 1e-9] = 1.0
        model = LogisticRegression(C=c, max_iter=1000).fit((x - mean) / scale, y)
        return cls(list(features), mean.tolist(), scale.tolist(), model.coef_[0].tolist(),
                   float(model.intercept_[0]))


def _coherence(sentences: Sequence[str], similarity: SimilarityModel) -> float | None:
    if len(sentences) < 2:
        return None
    return float(np.mean(similarity.paired(list(sentences[:-1]), list(sentences[1:]))))


def article_profile(pair: ArticlePair, similarity: SimilarityModel) -> dict[str, float | None]:
    """Gold-free statistics of an article pair (``None`` where a side has a single sentence)."""
    n_c, n_s = len(pair.complex.sentences), len(pair.simple.sentences)
    return {"complex_coherence": _coherence(pair.complex.sentences, similarity),
            "simple_coherence": _coherence(pair.simple.sentences, similarity),
            "simple_per_complex": n_s / n_c if n_c else None}


@dataclass
class DomainProfile:
    """Per statistic, the training articles' range; an article is inside when every statistic is
    within the range widened by ``margin`` times its median on both sides."""

    ranges: dict[str, list[float]]
    margin: float = 0.5
    n_articles: int = 0

    @classmethod
    def fit(cls, profiles: Sequence[dict[str, float | None]], margin: float = 0.5) -> DomainProfile:
        ranges = {}
        for name in profiles[0] if profiles else ():
            values = [p[name] for p in profiles if p.get(name) is not None]
            if values:
                ranges[name] = [float(min(values)), float(max(values)), float(np.median(values))]
        return cls(ranges, margin, len(profiles))

    def outside(self, profile: dict[str, float | None]) -> str | None:
        """Why ``profile`` is outside the training domain, or ``None`` when it is inside."""
        for name, (low, high, median) in self.ranges.items():
            value = profile.get(name)
            if value is None:
                return f"{name} undefined (one sentence)"
            pad = self.margin * abs(median)
            if not low - pad <= value <= high + pad:
                return f"{name} {value:.3f} outside the training range [{low:.3f}, {high:.3f}] ± {pad:.3f}"
        return None


@dataclass
class Decisions:
    """``decisions.json`` of a trained MODEL_DIR: the labeller (``None``: the label rule in
    ``thresholds.json`` decides) and the domain profile (``None``: no check)."""

    labeller: GroupLabeller | None = None
    domain: DomainProfile | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"labeller": asdict(self.labeller) if self.labeller else None,
                "domain": asdict(self.domain) if self.domain else None, "info": self.info}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Decisions:
        labeller = data.get("labeller")
        domain = data.get("domain")
        return cls(GroupLabeller(**labeller) if labeller else None,
                   DomainProfile(**domain) if domain else None, dict(data.get("info") or {}))
