"""Evaluation of sentence alignments (paper §4.2, SPEC §5.1).

* **Task 1** — aligned + partial vs not aligned: a predicted link counts whatever its label.
* **Task 2** — aligned vs partial + not aligned: only links labelled ``aligned`` count, on both
  sides (gold links are ``aligned`` unless ``gold_labels`` says ``partial``).

Links are ``(complex_index, simple_index)`` pairs; an n:m group stands for all its n·m links.
Identical sentence pairs are excluded from gold and predictions (they are trivial): the pairs
listed in the gold record's ``identical`` field, and any pair whose two sentences have the same
text (whitespace-normalised). Scores are micro-averaged over all article pairs.

Example:
    >>> from workers.engine.types import AlignedPair, Alignment, ArticlePair, Document
    >>> doc = Document(paragraphs=(("A.", "B."),))
    >>> gold = ArticlePair("x", doc, Document(paragraphs=(("a.", "b."),)), gold=((0, 0), (1, 1)))
    >>> pred = Alignment("x", [AlignedPair((0,), (0,), "aligned", 0.9)])
    >>> r = evaluate([pred], [gold])
    >>> r["task1"]["precision"], r["task1"]["recall"]
    (1.0, 0.5)
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from .errors import EngineInputError
from .types import Alignment, ArticlePair

__all__ = ["PRF", "ThresholdResult", "prf", "evaluate", "tune_threshold", "excluded_links"]

Link = tuple[int, int]


@dataclass(frozen=True)
class PRF:
    """Precision, recall, F1 and the counts behind them."""

    precision: float
    recall: float
    f1: float
    tp: int
    n_pred: int
    n_gold: int

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def prf(tp: int, n_pred: int, n_gold: int) -> PRF:
    """P/R/F1 from counts (0 when undefined)."""
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return PRF(p, r, f, tp, n_pred, n_gold)


def _norm(text: str) -> str:
    return " ".join(text.split())


def excluded_links(pair: ArticlePair) -> set[Link]:
    """Links left out of evaluation: listed ``identical`` pairs and same-text pairs."""
    out = set(pair.identical)
    c_idx: dict[str, list[int]] = {}
    for i, s in enumerate(pair.complex.sentences):
        c_idx.setdefault(_norm(s), []).append(i)
    for j, s in enumerate(pair.simple.sentences):
        for i in c_idx.get(_norm(s), ()):
            out.add((i, j))
    return out


def _pred_links(alignment: Alignment) -> tuple[set[Link], set[Link]]:
    all_links: set[Link] = set()
    aligned: set[Link] = set()
    for p in alignment.pairs:
        links = p.links()
        all_links.update(links)
        if p.label == "aligned":
            aligned.update(links)
    return all_links, aligned


def evaluate(
    predictions: Iterable[Alignment],
    gold: Iterable[ArticlePair],
    *,
    exclude_identical: bool = True,
    missing: str = "empty",
) -> dict[str, object]:
    """Task 1 and Task 2 precision/recall/F1 of ``predictions`` against gold article pairs.

    Args:
        predictions: one :class:`Alignment` per article pair (matched by ``id``).
        gold: article pairs with a ``gold`` field; pairs without gold are skipped.
        exclude_identical: leave identical pairs out (the paper's protocol).
        missing: ``"empty"`` — an article without prediction counts as predicting nothing;
            ``"error"`` — raise.

    Returns:
        ``{"task1": {...}, "task2": {...}, "n_articles": int}`` with PRF dicts.

    Raises:
        ValueError: bad ``missing`` value.
        EngineInputError: ``missing="error"`` and a gold article has no prediction.
    """
    if missing not in ("empty", "error"):
        raise ValueError(f"unknown missing={missing!r}; choose one of: empty, error")
    by_id = {a.id: a for a in predictions}
    counts = np.zeros((2, 3), dtype=np.int64)  # task × (tp, n_pred, n_gold)
    n_articles = 0
    for g in gold:
        if g.gold is None:
            continue
        n_articles += 1
        pred = by_id.get(g.id)
        if pred is None and missing == "error":
            raise EngineInputError(f"no prediction for article {g.id!r}", field="id")
        p_all, p_aligned = _pred_links(pred) if pred is not None else (set(), set())
        labels = g.gold_labels or ("aligned",) * len(g.gold)
        g_all = set(g.gold)
        g_aligned = {link for link, lab in zip(g.gold, labels) if lab == "aligned"}
        if exclude_identical:
            ex = excluded_links(g)
            p_all, p_aligned, g_all, g_aligned = (s - ex for s in (p_all, p_aligned, g_all,
                                                                  g_aligned))
        counts[0] += (len(p_all & g_all), len(p_all), len(g_all))
        counts[1] += (len(p_aligned & g_aligned), len(p_aligned), len(g_aligned))
    return {
        "task1": prf(*map(int, counts[0])).as_dict(),
        "task2": prf(*map(int, counts[1])).as_dict(),
        "n_articles": n_articles,
    }


@dataclass(frozen=True)
class ThresholdResult:
    """Best threshold found by :func:`tune_threshold` and the scores it reaches."""

    threshold: float
    precision: float
    recall: float
    f1: float


def tune_threshold(
    scores: Sequence[float] | np.ndarray,
    is_gold: Sequence[bool] | np.ndarray,
    n_gold: int | None = None,
) -> ThresholdResult:
    """Threshold maximising F1 when predicting every candidate with ``score >= threshold``.

    Args:
        scores: score of every candidate link (e.g. every sentence pair of the dev articles).
        is_gold: whether each candidate is a gold link.
        n_gold: total number of gold links, when some gold links are not among the
            candidates (they count as misses); default ``sum(is_gold)``.

    Example:
        >>> tune_threshold([0.9, 0.8, 0.3, 0.2], [True, True, False, False]).threshold
        0.8
    """
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(is_gold, dtype=bool)
    if s.shape != y.shape:
        raise ValueError("scores and is_gold must have the same length")
    total = int(y.sum()) if n_gold is None else int(n_gold)
    if total < int(y.sum()):
        raise ValueError("n_gold is smaller than the number of gold candidates")
    if s.size == 0 or total == 0:
        return ThresholdResult(float("inf"), 0.0, 0.0, 0.0)
    order = np.argsort(-s, kind="stable")
    s_sorted, y_sorted = s[order], y[order]
    tp = np.cumsum(y_sorted)
    n_pred = np.arange(1, s.size + 1)
    # only cut where the next score differs (ties are predicted together)
    last_of_tie = np.r_[s_sorted[1:] != s_sorted[:-1], True]
    prec = tp / n_pred
    rec = tp / total
    f1 = np.where(prec + rec > 0, 2 * prec * rec / np.maximum(prec + rec, 1e-12), 0.0)
    f1 = np.where(last_of_tie, f1, -1.0)
    k = int(np.argmax(f1))
    return ThresholdResult(float(s_sorted[k]), float(prec[k]), float(rec[k]), float(f1[k]))
