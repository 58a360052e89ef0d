"""Inter-annotator agreement (SPEC §6): Cohen's κ pairwise, Fleiss' κ, Krippendorff's α, and
agreement on alignment *links*.

The CRF paper reports Cohen's κ between crowd annotators (0.807) and WIVICO between its two
annotators (0.87); with more than two annotators per item Fleiss' κ and Krippendorff's α summarise
everyone at once (α also copes with items not every annotator labelled).

Everything here works on a *label matrix*: ``{item: {annotator: value}}`` with only the labels that
exist (missing cells are simply absent). :func:`project_agreement` builds the matrices of a project
from the votes the gold reads (:func:`annotation.services.review.agreement_votes.vote_rows`: the labels
that count — no test answers, no excluded annotators — plus the "not aligned" each completion of a
document pair implies on every sentence pair its completer left unlinked, so two completions of one
article are compared on every cell both saw) and reports, per label scheme:

* categorical schemes: the scheme's own values, the three classes they count as
  (aligned / partial / not) and the binary collapse (aligned + partial vs not);
* Likert schemes: each dimension (simplicity, adequacy, fluency) with Cohen's κ, quadratic-weighted
  Cohen's κ, Fleiss' κ and α at the nominal, ordinal and interval levels.

Link agreement (:func:`link_agreement`) compares two annotators as aligners: the precision and
recall of A's aligned pairs measured against B's, the aligned/partial/not confusion matrix, and κ
of the binary collapse.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from itertools import combinations

import numpy as np

from annotation.models import LabelScheme, Project

Matrix = Mapping[Hashable, Mapping[Hashable, Hashable]]
CLASSES = ("aligned", "partial", "not")


def _finite(value: float) -> float | None:
    """NaN/inf (an undefined statistic) as None, so it serialises and displays as 'undefined'."""
    return float(value) if value is not None and math.isfinite(value) else None


# --- Building matrices ------------------------------------------------------------------------

def label_matrix(rows: Iterable[tuple[Hashable, Hashable, Hashable]]) -> dict[Hashable, dict[Hashable, Hashable]]:
    """``[(item, annotator, value), ...]`` → ``{item: {annotator: value}}``; empty values are skipped.

    Example:
        >>> label_matrix([(1, "ann", "a"), (1, "bob", "b"), (2, "ann", "")])
        {1: {'ann': 'a', 'bob': 'b'}}
    """
    matrix: dict[Hashable, dict[Hashable, Hashable]] = defaultdict(dict)
    for item, annotator, value in rows:
        if value not in (None, ""):
            matrix[item][annotator] = value
    return dict(matrix)


def recode(matrix: Matrix, mapping: Mapping[Hashable, Hashable]) -> dict[Hashable, dict[Hashable, Hashable]]:
    """The matrix with every value mapped (values missing from ``mapping`` are dropped)."""
    return {item: {a: mapping[v] for a, v in votes.items() if v in mapping} for item, votes in matrix.items()}


def annotators_of(matrix: Matrix) -> list:
    return sorted({a for votes in matrix.values() for a in votes}, key=str)


# --- Cohen's kappa ----------------------------------------------------------------------------

def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable], *, categories: Sequence[Hashable] | None = None,
                weights: str | None = None) -> float | None:
    """Cohen's κ of two annotators' labels of the same items (the formula of scikit-learn's
    ``cohen_kappa_score``, computed here on a small confusion table: sklearn's input checks cost more
    than the statistic, and the dashboard computes one per pair of annotators and per document pair).

    None when undefined: no items, or chance agreement of 1 (both used one and the same label).
    ``weights`` ("linear" or "quadratic") is for ordered scales; then ``categories`` must be in order.
    Items whose labels are not among ``categories`` are left out (as sklearn's ``labels=`` does).

    Example:
        >>> cohen_kappa(["x", "y", "x", "y"], ["x", "y", "x", "y"])
        1.0
    """
    if len(a) != len(b):  # a programming error: the callers pair the items up first
        raise ValueError("both annotators must label the same items")
    if not a:
        return None
    if weights not in (None, "linear", "quadratic"):  # a programming error: the callers pass a constant
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    labels = list(categories) if categories is not None else sorted(set(a) | set(b), key=str)
    index = {c: i for i, c in enumerate(labels)}
    n = len(labels)
    confusion = np.zeros((n, n), dtype=np.float64)
    for (x, y), count in Counter(zip(a, b)).items():
        if x in index and y in index:
            confusion[index[x], index[y]] += count
    total = confusion.sum()
    if total == 0:
        return None
    expected = np.outer(confusion.sum(axis=1), confusion.sum(axis=0)) / total
    if weights is None:
        w = 1.0 - np.eye(n)
    else:
        grid = np.abs(np.subtract.outer(np.arange(n), np.arange(n))).astype(np.float64)
        w = grid if weights == "linear" else grid ** 2
    denominator = float((w * expected).sum())
    if denominator == 0:
        return None  # chance agreement of 1: 0/0
    return _finite(1.0 - float((w * confusion).sum()) / denominator)


def observed_agreement(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    return sum(x == y for x, y in zip(a, b)) / len(a) if a else None


def shared_items(matrix: Matrix) -> dict[tuple[Hashable, Hashable], list[Hashable]]:
    """``{(a, b): [item, ...]}``: for each pair of annotators (``a`` before ``b`` in :func:`annotators_of`
    order) the items both labelled, in the matrix's order — one pass over the items (each item's own
    pairs of annotators), not one pass per pair of annotators (quadratic in the annotators)."""
    order = {a: i for i, a in enumerate(annotators_of(matrix))}
    out: dict[tuple[Hashable, Hashable], list[Hashable]] = defaultdict(list)
    for item, votes in matrix.items():
        if len(votes) >= 2:
            for a, b in combinations(sorted(votes, key=order.__getitem__), 2):
                out[(a, b)].append(item)
    return {pair: out[pair] for pair in sorted(out, key=lambda p: (order[p[0]], order[p[1]]))}


def pairwise_cohen(matrix: Matrix, *, categories: Sequence[Hashable] | None = None,
                   weights: str | None = None) -> list[dict]:
    """Cohen's κ for every pair of annotators, over the items both labelled.

    Returns ``[{"a", "b", "items", "observed", "kappa"}, ...]`` (pairs sharing no item are left out).
    """
    out = []
    for (a, b), items in shared_items(matrix).items():
        xs, ys = [matrix[i][a] for i in items], [matrix[i][b] for i in items]
        out.append({"a": a, "b": b, "items": len(items), "observed": observed_agreement(xs, ys),
                    "kappa": cohen_kappa(xs, ys, categories=categories, weights=weights)})
    return out


def mean_kappa(pairs: Sequence[dict]) -> float | None:
    """Mean pairwise κ weighted by the number of shared items (undefined pairs left out)."""
    defined = [(p["kappa"], p["items"]) for p in pairs if p["kappa"] is not None]
    total = sum(n for _, n in defined)
    return sum(k * n for k, n in defined) / total if total else None


# --- Fleiss' kappa ----------------------------------------------------------------------------

def fleiss_kappa_from_counts(counts: Sequence[Sequence[float]]) -> float | None:
    """Fleiss' κ from an items × categories table of how many annotators chose each category.

    Fleiss (1971), "Measuring nominal scale agreement among many raters", Psychological Bulletin
    76(5), eq. 1–9. Items may have different numbers of annotators (the usual generalisation: each
    item's agreement P_i uses its own n_i, and category proportions p_j pool all ratings); items
    with fewer than two ratings carry no agreement information and are left out. None when
    undefined (no such item, or chance agreement of 1).

    Example (the worked example of the Wikipedia article "Fleiss' kappa": κ ≈ 0.210):
        >>> table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        ...          [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
        >>> round(fleiss_kappa_from_counts(table), 3)
        0.21
    """
    table = np.asarray(counts, dtype=np.float64)
    if table.ndim != 2 or table.size == 0:
        return None
    n_i = table.sum(axis=1)
    table, n_i = table[n_i >= 2], n_i[n_i >= 2]
    if table.shape[0] == 0:
        return None
    p_i = ((table * table).sum(axis=1) - n_i) / (n_i * (n_i - 1))
    p_bar = float(p_i.mean())
    p_j = table.sum(axis=0) / table.sum()
    p_e = float((p_j * p_j).sum())
    if math.isclose(p_e, 1.0):
        return None
    return _finite((p_bar - p_e) / (1.0 - p_e))


def count_table(matrix: Matrix, categories: Sequence[Hashable]) -> list[list[int]]:
    """Items × categories counts of a label matrix (values outside ``categories`` are ignored)."""
    index = {c: i for i, c in enumerate(categories)}
    table = []
    for votes in matrix.values():
        row = [0] * len(categories)
        for value in votes.values():
            if value in index:
                row[index[value]] += 1
        table.append(row)
    return table


def fleiss_kappa(matrix: Matrix, categories: Sequence[Hashable]) -> float | None:
    return fleiss_kappa_from_counts(count_table(matrix, categories))


# --- Krippendorff's alpha ---------------------------------------------------------------------

def krippendorff_alpha(matrix: Matrix, categories: Sequence[Hashable], *, level: str = "nominal") -> float | None:
    """Krippendorff's α (the ``krippendorff`` package), annotators × items with missing cells.

    ``categories`` fixes the value domain (in order: for ``ordinal``/``interval`` levels the position
    of a category is its value, so pass numbers-as-strings of a Likert scale in scale order, or the
    numbers themselves). None when undefined (fewer than two pairable values, one value in use).
    """
    import krippendorff

    annotators = annotators_of(matrix)
    items = [votes for votes in matrix.values() if sum(v in categories for v in votes.values()) >= 2]
    if not items or len(annotators) < 2:
        return None
    if level in ("ordinal", "interval", "ratio"):
        code = {c: float(c) for c in categories} if all(_is_number(c) for c in categories) \
            else {c: float(i) for i, c in enumerate(categories)}
    else:
        code = {c: float(i) for i, c in enumerate(categories)}
    data = np.full((len(annotators), len(items)), np.nan)
    row = {a: i for i, a in enumerate(annotators)}
    for j, votes in enumerate(items):
        for annotator, value in votes.items():
            if value in code:
                data[row[annotator], j] = code[value]
    used = np.unique(data[~np.isnan(data)])  # a set comprehension over every cell took 0.5 s a matrix at 1M pairs
    if len(used) < 2:
        # Every pairable value is the same: observed and expected disagreement are both 0.
        return None
    try:
        value = krippendorff.alpha(reliability_data=data, value_domain=sorted(set(code.values())),
                                   level_of_measurement=level)
    except (ValueError, ZeroDivisionError):
        return None
    return _finite(value)


def _is_number(value) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


# --- Summaries --------------------------------------------------------------------------------

def summary(matrix: Matrix, categories: Sequence[Hashable], *, ordered: bool = False) -> dict:
    """Every statistic for one label matrix: items with ≥ 2 labels, annotators, value counts,
    pairwise Cohen's κ (and their weighted mean), Fleiss' κ, Krippendorff's α."""
    multi = {item: votes for item, votes in matrix.items() if len(votes) >= 2}
    pairs = pairwise_cohen(matrix, categories=categories)
    out = {
        "items": len(matrix),
        "items_multi": len(multi),
        "annotators": len(annotators_of(matrix)),
        "counts": {str(c): n for c, n in _value_counts(matrix, categories).items()},
        "cohen": [{**p, "a": str(p["a"]), "b": str(p["b"])} for p in pairs],
        "cohen_mean": mean_kappa(pairs),
        "fleiss": fleiss_kappa(multi, categories),
        "alpha": krippendorff_alpha(matrix, categories, level="nominal"),
    }
    if ordered:
        weighted = pairwise_cohen(matrix, categories=categories, weights="quadratic")
        out["cohen_quadratic_mean"] = mean_kappa(weighted)
        for p, w in zip(out["cohen"], weighted):
            p["kappa_quadratic"] = w["kappa"]
        out["alpha_ordinal"] = krippendorff_alpha(matrix, categories, level="ordinal")
        out["alpha_interval"] = krippendorff_alpha(matrix, categories, level="interval")
    return out


def _value_counts(matrix: Matrix, categories: Sequence[Hashable]) -> dict:
    counts = Counter(v for votes in matrix.values() for v in votes.values())
    return {c: counts.get(c, 0) for c in categories}


# --- Link agreement ---------------------------------------------------------------------------

def _prf(tp: int, predicted: int, reference: int) -> dict:
    p = tp / predicted if predicted else None
    r = tp / reference if reference else None
    f = 2 * p * r / (p + r) if p and r else (0.0 if p is not None and r is not None else None)
    return {"precision": p, "recall": r, "f1": f, "true_positives": tp, "predicted": predicted, "reference": reference}


def link_agreement(classes_a: Mapping[Hashable, str], classes_b: Mapping[Hashable, str]) -> dict:
    """Two annotators compared as aligners, over the pairs both labelled.

    ``classes_*`` map each pair to ``aligned``/``partial``/``not`` (the scheme's ``counts_as``).
    A's links are scored against B's as the reference: ``strict`` counts only *aligned* pairs as
    links, ``lenient`` counts aligned + partial. ``confusion[a_class][b_class]`` counts pairs;
    ``binary_kappa`` is Cohen's κ of the collapse aligned + partial vs not.

    Example:
        >>> r = link_agreement({1: "aligned", 2: "partial", 3: "not"}, {1: "aligned", 2: "aligned", 3: "not"})
        >>> r["strict"]["precision"], r["strict"]["recall"], r["lenient"]["f1"], r["binary_kappa"]
        (1.0, 0.5, 1.0, 1.0)
    """
    shared = [p for p in classes_a if p in classes_b]
    confusion = {x: {y: 0 for y in CLASSES} for x in CLASSES}
    for p in shared:
        if classes_a[p] in confusion and classes_b[p] in CLASSES:
            confusion[classes_a[p]][classes_b[p]] += 1
    out: dict = {"items": len(shared), "confusion": confusion}
    for name, positive in (("strict", {"aligned"}), ("lenient", {"aligned", "partial"})):
        a = {p for p in shared if classes_a[p] in positive}
        b = {p for p in shared if classes_b[p] in positive}
        out[name] = _prf(len(a & b), len(a), len(b))
    binary_a = ["yes" if classes_a[p] in ("aligned", "partial") else "no" for p in shared]
    binary_b = ["yes" if classes_b[p] in ("aligned", "partial") else "no" for p in shared]
    out["binary_kappa"] = cohen_kappa(binary_a, binary_b, categories=["yes", "no"])
    out["binary_observed"] = observed_agreement(binary_a, binary_b)
    return out


def pairwise_links(class_matrix: Matrix) -> list[dict]:
    """:func:`link_agreement` for every pair of annotators sharing at least one item."""
    out = []
    for (a, b), items in shared_items(class_matrix).items():
        result = link_agreement({i: class_matrix[i][a] for i in items}, {i: class_matrix[i][b] for i in items})
        out.append({"a": str(a), "b": str(b), **result})
    return out


# --- A project's agreement --------------------------------------------------------------------

def project_agreement(project: Project) -> dict:
    """Agreement of a project's counted labels, shaped for the dashboard and the API.

    ``{"scheme": slug, "kind": kind, ...}`` plus what the scheme's kind computes
    (:meth:`annotation.label_schemes.SchemeKind.agreement`): categorical ``values``, ``classes``,
    ``binary`` summaries and ``links``; Likert ``dimensions`` (name → summary). Annotators are named by
    username.
    """
    import sys

    from annotation.label_schemes import scheme_kind
    from annotation.services.review import agreement_votes

    scheme: LabelScheme = project.label_scheme
    # the votes the gold reads: counted labels plus each completion's implied "not" (issue 34 §3)
    gold = scheme_kind(scheme).gold
    rows = agreement_votes.vote_rows(project) if gold else agreement_votes.counted_rows(project)
    out = {"scheme": scheme.slug, "kind": scheme.kind, **scheme_kind(scheme).agreement(scheme, rows, sys.modules[__name__])}
    if gold:
        out["document_pairs"] = document_pair_agreement(project)
    return out


def document_pair_agreement(project: Project) -> list[dict]:
    """Per document pair two or more annotators completed: binary (link vs not) Cohen's κ (mean over
    pairs of completers) and observed agreement over every sentence pair they all saw, not aligned
    included (:func:`annotation.services.review.agreement_votes.completed_cells`)."""
    from annotation.services.review import agreement_votes

    out = []
    for (c, s), cells in sorted(agreement_votes.completed_cells(project).items()):
        binary = {cell: {u: "link" if v in ("aligned", "partial") else "not" for u, v in by.items()}
                  for cell, by in cells.items()}
        pairs = pairwise_cohen(binary, categories=["link", "not"])
        agree = [p["observed"] for p in pairs if p["observed"] is not None]
        out.append({"complex_document": c, "simple_document": s, "annotators": len(annotators_of(binary)),
                    "cells": len(cells), "kappa": mean_kappa(pairs),
                    "observed": _finite(sum(agree) / len(agree)) if agree else None})
    return out
