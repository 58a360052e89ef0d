"""Paragraph alignment before sentence alignment (Jiang et al. 2020, §2.4 and App. A.1; SPEC §5.2).

Two variants, both over a sentence similarity matrix (any backend of
:mod:`workers.engine.similarity`). Paragraph i of the simple article (k paragraphs) and j of the
complex article (l paragraphs) are 1-based in the formulas; relative distance
``d(i, j) = |i/k − j/l|``.

* **Newsela** (Alg. 1 + 2): ``simP[1,i,j]`` = mean over simple sentences of S_i of their best
  similarity in C_j; ``simP[2,i,j]`` = max similarity over sentence pairs. Align (i, argmax_j
  simP[1]) if simP[1] > τ1 and d < τ2; align any j with simP[2] > τ3; align two consecutive
  j−1, j when both simP[2] > τ4 and both d < τ5 (paragraph split/fusion). Table 10 defaults.
* **Wikipedia** (Alg. 3 + 4): ``simP`` = max similarity; candidates j with simP > τ1 and d < τ2;
  when there are several and their spread is wide (range/l > τ3 and range > τ4), keep the one
  closest to i (|j − i|, as in Alg. 4) and drop the others with simP ≤ τ5. Table 11 defaults.

Finally neighbouring complex paragraphs aligned to the same simple paragraph are merged into one
unit (§2.4). The paper's thresholds were tuned for a fine-tuned BERT's probabilities; for other
similarities use :func:`calibrate` (grid search maximising paragraph-link F1 on labelled dev
data, where gold paragraph links are the paragraph pairs containing a gold sentence link).

Example:
    >>> import numpy as np
    >>> sim = np.eye(4, dtype=np.float32)       # 4 complex × 4 simple sentences
    >>> pa = align_paragraphs(sim, (0, 0, 1, 1), (0, 0, 1, 1),
    ...                       thresholds=NewselaThresholds(0.5, 0.5, 0.99, 0.99, 0.5))
    >>> pa.links
    [((0,), 0), ((1,), 1)]
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Literal

import numpy as np

from .options import Option, option_fields
from .similarity import SimilarityModel
from .types import ArticlePair

__all__ = [
    "ParagraphVariant",
    "PARAGRAPH_VARIANTS",
    "NewselaThresholds",
    "WikiThresholds",
    "ParagraphAlignment",
    "paragraph_similarity",
    "align_paragraphs_newsela",
    "align_paragraphs_wiki",
    "align_paragraphs",
    "merge_neighbours",
    "gold_paragraph_links",
    "CalibrationResult",
    "calibrate",
]

ParagraphVariant = Literal["newsela", "wiki"]
PARAGRAPH_VARIANTS: tuple[str, ...] = ("newsela", "wiki")


def _taus(*defaults: float) -> tuple[Option, ...]:
    """The options τ1..τ5 of a variant's thresholds, with its defaults."""
    return tuple(Option(f"tau{i}", "float", v) for i, v in enumerate(defaults, start=1))


@dataclass(frozen=True)
@option_fields(_taus(0.1, 0.34, 0.9998861788416304, 0.998915818299745, 0.5))
class NewselaThresholds:
    """τ1..τ5 of Algorithm 2; defaults from Table 10 (fine-tuned BERT on Newsela-Manual dev)."""


@dataclass(frozen=True)
@option_fields(_taus(0.991775706637882, 0.8, 0.5, 5, 0.9958))
class WikiThresholds:
    """τ1..τ5 of Algorithm 4; defaults from Table 11 (fine-tuned BERT on Wiki-Manual dev)."""


Thresholds = NewselaThresholds | WikiThresholds


@dataclass(frozen=True)
class ParagraphAlignment:
    """Result: the k×l boolean matrix and the merged links.

    Attributes:
        matrix: ``alignP[i, j]`` for simple paragraph i, complex paragraph j (0-based).
        links: ``(complex_paragraphs, simple_paragraph)``; consecutive complex paragraphs
            aligned to the same simple paragraph are merged into one tuple.
    """

    matrix: np.ndarray
    links: list[tuple[tuple[int, ...], int]]

    def sentence_mask(self, complex_par: Sequence[int], simple_par: Sequence[int]) -> np.ndarray:
        """Allowed sentence pairs ``[n_complex, n_simple]``: both in aligned paragraphs."""
        if len(complex_par) == 0 or len(simple_par) == 0:
            return np.zeros((len(complex_par), len(simple_par)), dtype=bool)
        return self.matrix[np.asarray(simple_par)][:, np.asarray(complex_par)].T.copy()


def _pool(sim: np.ndarray, complex_par: Sequence[int], simple_par: Sequence[int],
          k: int, l: int) -> tuple[np.ndarray, np.ndarray]:
    """(avg-of-max, max) paragraph similarity [k, l] (Alg. 1)."""
    avg = np.zeros((k, l), dtype=np.float64)
    mx = np.zeros((k, l), dtype=np.float64)
    cp = np.asarray(complex_par, dtype=np.int64)
    sp = np.asarray(simple_par, dtype=np.int64)
    if sim.size == 0:
        return avg, mx
    # best similarity of every simple sentence within every complex paragraph: [l, m]
    best_in = np.full((l, sim.shape[1]), -np.inf)
    np.maximum.at(best_in, cp, sim.astype(np.float64))
    best_in[np.isinf(best_in)] = 0.0
    for i in range(k):
        cols = sp == i
        if cols.any():
            avg[i] = best_in[:, cols].mean(axis=1)
            mx[i] = best_in[:, cols].max(axis=1)
    return avg, mx


def paragraph_similarity(
    sim: np.ndarray, complex_par: Sequence[int], simple_par: Sequence[int],
    n_complex_paragraphs: int | None = None, n_simple_paragraphs: int | None = None,
) -> np.ndarray:
    """Algorithm 1: ``simP [2, k, l]`` (avg of max, max) from sentence similarity ``[n, m]``.

    Algorithm 3's matrix is ``simP[1]`` (the max). Paragraph counts default to the largest
    index + 1.
    """
    l = n_complex_paragraphs if n_complex_paragraphs is not None else (max(complex_par, default=-1) + 1)
    k = n_simple_paragraphs if n_simple_paragraphs is not None else (max(simple_par, default=-1) + 1)
    avg, mx = _pool(np.asarray(sim), complex_par, simple_par, k, l)
    return np.stack([avg, mx])


def _dist(k: int, l: int) -> np.ndarray:
    i = np.arange(1, k + 1)[:, None] / max(k, 1)
    j = np.arange(1, l + 1)[None, :] / max(l, 1)
    return np.abs(i - j)


def align_paragraphs_newsela(simP: np.ndarray, t: NewselaThresholds = NewselaThresholds()
                             ) -> np.ndarray:
    """Algorithm 2 on ``simP [2, k, l]`` → ``alignP [k, l]`` (bool)."""
    _, k, l = simP.shape
    out = np.zeros((k, l), dtype=bool)
    if k == 0 or l == 0:
        return out
    d = _dist(k, l)
    avg, mx = simP[0], simP[1]
    jmax = avg.argmax(axis=1)
    rows = np.arange(k)
    ok = (avg[rows, jmax] > t.tau1) & (d[rows, jmax] < t.tau2)
    out[rows[ok], jmax[ok]] = True
    out |= mx > t.tau3
    if l > 1:
        pair = (mx[:, 1:] > t.tau4) & (mx[:, :-1] > t.tau4) & (d[:, 1:] < t.tau5) & (d[:, :-1] < t.tau5)
        out[:, 1:] |= pair
        out[:, :-1] |= pair
    return out


def align_paragraphs_wiki(simP: np.ndarray, t: WikiThresholds = WikiThresholds()) -> np.ndarray:
    """Algorithm 4 on ``simP [k, l]`` (or ``[1, k, l]``) → ``alignP [k, l]`` (bool)."""
    if simP.ndim == 3:
        simP = simP[-1] if simP.shape[0] == 2 else simP[0]
    k, l = simP.shape
    out = np.zeros((k, l), dtype=bool)
    if k == 0 or l == 0:
        return out
    d = _dist(k, l)
    for i in range(k):
        cand = [j for j in range(l) if simP[i, j] > t.tau1 and d[i, j] < t.tau2]
        if len(cand) > 1:
            rng = max(cand) - min(cand)
            if rng / l > t.tau3 and rng > t.tau4:
                closest = min(cand, key=lambda j: abs(j - i))
                cand = [j for j in cand if j == closest or simP[i, j] > t.tau5]
        out[i, cand] = True
    return out


def merge_neighbours(matrix: np.ndarray) -> list[tuple[tuple[int, ...], int]]:
    """Links ``(complex_paragraphs, simple_paragraph)`` with consecutive complex paragraphs
    aligned to the same simple paragraph merged (§2.4)."""
    links: list[tuple[tuple[int, ...], int]] = []
    for i in range(matrix.shape[0]):
        js = np.flatnonzero(matrix[i]).tolist()
        for _, run in itertools.groupby(enumerate(js), key=lambda t: t[1] - t[0]):
            links.append((tuple(j for _, j in run), i))
    links.sort(key=lambda x: (x[0][0], x[1]))
    return links


def align_paragraphs(
    sim: np.ndarray,
    complex_par: Sequence[int],
    simple_par: Sequence[int],
    *,
    variant: ParagraphVariant = "newsela",
    thresholds: Thresholds | None = None,
    n_complex_paragraphs: int | None = None,
    n_simple_paragraphs: int | None = None,
) -> ParagraphAlignment:
    """Align paragraphs from a sentence similarity ``[n, m]`` and paragraph indices.

    Raises:
        ValueError: unknown ``variant`` (the message lists the valid ones) or thresholds of the
            other variant.
    """
    if variant not in PARAGRAPH_VARIANTS:
        raise ValueError(f"unknown paragraph alignment {variant!r}; choose one of: "
                         f"{', '.join(PARAGRAPH_VARIANTS)}")
    simP = paragraph_similarity(sim, complex_par, simple_par, n_complex_paragraphs,
                                n_simple_paragraphs)
    if variant == "newsela":
        t = thresholds or NewselaThresholds()
        if not isinstance(t, NewselaThresholds):
            raise ValueError("the newsela variant needs NewselaThresholds")
        m = align_paragraphs_newsela(simP, t)
    else:
        t = thresholds or WikiThresholds()
        if not isinstance(t, WikiThresholds):
            raise ValueError("the wiki variant needs WikiThresholds")
        m = align_paragraphs_wiki(simP[1], t)
    return ParagraphAlignment(matrix=m, links=merge_neighbours(m))


def gold_paragraph_links(pair: ArticlePair) -> set[tuple[int, int]]:
    """``(simple_paragraph, complex_paragraph)`` pairs holding at least one gold sentence link."""
    cp, sp = pair.complex.paragraph_index, pair.simple.paragraph_index
    return {(sp[s], cp[c]) for c, s in (pair.gold or ())}


@dataclass(frozen=True)
class CalibrationResult:
    """Thresholds chosen by :func:`calibrate` and the paragraph-link scores they reach."""

    variant: str
    thresholds: Thresholds
    precision: float
    recall: float
    f1: float
    default_f1: float

    def as_dict(self) -> dict[str, object]:
        return {"variant": self.variant, "thresholds": asdict(self.thresholds),
                "precision": self.precision, "recall": self.recall, "f1": self.f1,
                "default_f1": self.default_f1}


def _grid(values: np.ndarray, n: int) -> list[float]:
    if values.size == 0:
        return [0.5]
    qs = np.quantile(values, np.linspace(0.0, 1.0, n))
    return sorted({float(q) for q in qs})


def calibrate(
    pairs: Sequence[ArticlePair],
    similarity: SimilarityModel | None = None,
    *,
    variant: ParagraphVariant = "newsela",
    sims: Sequence[np.ndarray] | None = None,
    rounds: int = 2,
    grid_size: int = 12,
) -> CalibrationResult:
    """Pick τ1..τ5 maximising paragraph-link F1 on labelled pairs (coordinate ascent on a grid).

    Gold paragraph links are derived from the gold sentence links. Similarity thresholds are
    searched over quantiles of the observed paragraph similarities (so the grid fits any
    similarity scale), distance thresholds over fixed values; each threshold is optimised in
    turn with the others fixed, ``rounds`` times, starting from the paper's defaults.

    Args:
        pairs: article pairs with ``gold``.
        similarity: backend used when ``sims`` is not given.
        variant: ``"newsela"`` or ``"wiki"``.
        sims: precomputed sentence similarities ``[n, m]`` per pair.

    Raises:
        ValueError: no pair has gold, unknown variant, or neither ``similarity`` nor ``sims``.

    Example:
        >>> # result = calibrate(dev_pairs, get_similarity("sbert"))
        >>> # result.thresholds, result.f1
    """
    if variant not in PARAGRAPH_VARIANTS:
        raise ValueError(f"unknown paragraph alignment {variant!r}; choose one of: "
                         f"{', '.join(PARAGRAPH_VARIANTS)}")
    labelled = [(k, p) for k, p in enumerate(pairs) if p.gold is not None]
    if not labelled:
        raise ValueError("calibrate() needs article pairs with gold links")
    if sims is None and similarity is None:
        raise ValueError("give a similarity model or precomputed sims")
    data = _calibration_data(pairs, labelled, similarity, sims)
    grids, best_t = _threshold_grids(data, variant, grid_size)
    default_f1 = _link_scores(data, variant, best_t)[2]
    best = _link_scores(data, variant, best_t)
    for _ in range(rounds):
        for name, values in grids.items():
            for v in values:
                cand = replace(best_t, **{name: v})
                s = _link_scores(data, variant, cand)
                if s[2] > best[2] + 1e-12:
                    best, best_t = s, cand
    return CalibrationResult(variant, best_t, best[0], best[1], best[2], default_f1)


_Calibration = list[tuple[tuple[np.ndarray, np.ndarray], set[tuple[int, int]]]]


def _calibration_data(pairs: Sequence[ArticlePair], labelled: list[tuple[int, ArticlePair]],
                      similarity: SimilarityModel | None, sims: Sequence[np.ndarray] | None) -> _Calibration:
    """Each labelled pair's paragraph similarities ``simP`` and gold paragraph links."""
    data = []
    for k, p in labelled:
        s = sims[k] if sims is not None else similarity.similarity(  # type: ignore[union-attr]
            p.complex.sentences, p.simple.sentences)
        simP = paragraph_similarity(s, p.complex.paragraph_index, p.simple.paragraph_index,
                                    len(p.complex.paragraphs), len(p.simple.paragraphs))
        data.append((simP, gold_paragraph_links(p)))
    return data


def _link_scores(data: _Calibration, variant: ParagraphVariant, t: Thresholds) -> tuple[float, float, float]:
    """Micro precision, recall and F1 of the paragraph links that thresholds ``t`` give."""
    tp = npred = ngold = 0
    for simP, gold in data:
        m = (align_paragraphs_newsela(simP, t) if variant == "newsela"  # type: ignore[arg-type]
             else align_paragraphs_wiki(simP[1], t))  # type: ignore[arg-type]
        pred = {(int(i), int(j)) for i, j in zip(*np.nonzero(m))}
        tp += len(pred & gold)
        npred += len(pred)
        ngold += len(gold)
    p = tp / npred if npred else 0.0
    r = tp / ngold if ngold else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def _threshold_grids(data: _Calibration, variant: ParagraphVariant,
                     grid_size: int) -> tuple[dict[str, list[float]], Thresholds]:
    """The values searched for each τ (similarity ones at quantiles of the observed paragraph
    similarities, distance ones fixed) and the paper's defaults the search starts from."""
    avg_vals = np.concatenate([d[0][0].ravel() for d in data])
    max_vals = np.concatenate([d[0][1].ravel() for d in data])
    inf = float("inf")
    if variant == "newsela":
        return {
            "tau1": _grid(avg_vals, grid_size) + [-inf],
            "tau2": [0.1, 0.2, 0.34, 0.5, 0.75, inf],
            "tau3": _grid(max_vals, grid_size) + [inf],
            "tau4": _grid(max_vals, grid_size) + [inf],
            "tau5": [0.1, 0.2, 0.34, 0.5, 0.75, inf],
        }, NewselaThresholds()
    return {
        "tau1": _grid(max_vals, grid_size),
        "tau2": [0.1, 0.2, 0.34, 0.5, 0.8, inf],
        "tau3": [0.1, 0.25, 0.5, inf],
        "tau4": [1, 2, 3, 5, 10],
        "tau5": _grid(max_vals, grid_size) + [inf],
    }, WikiThresholds()
