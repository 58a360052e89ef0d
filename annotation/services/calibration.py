"""Score distributions per human label and the thresholds calibrated from them.

WIVICO (§3.2.2, Fig. 2) plots the SBERT score of 500 annotated pairs as one box per human label
(valid / partially valid / non-valid) and takes the **mean score of the valid pairs** (0.81 there)
as the cut-off. The alternative here is the threshold that **maximises F1** of the model's
predictions against the human labels (:func:`workers.engine.metrics.tune_threshold`, the same search
the heuristic aligners use on dev data).

A pair's human label is its gold (:class:`~annotation.models.Adjudication`) when it has one, else
the majority of its counted votes (ties: unlabelled). Classes come from the scheme's ``counts_as``.

:func:`calibrate` stores the result where later runs and jobs read it::

    project.config["thresholds"] = {"aligned": 0.81, "partial": 0.64, "method": "mean-valid",
                                    "source_run": 12, "pairs": {...}, "computed_at": "..."}
    project.config["wivico"]["threshold" / "partial_threshold"]   # mean-valid only (WIVICO's rule)
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from ..models import Adjudication, AlignmentRun, CandidatePair, LabelScheme, Prediction, Project
from . import qc
from .adjudication import majority_value

METHODS = ("mean-valid", "max-f1")
MAX_OUTLIERS = 200


class CalibrationError(ValueError):
    """Nothing to calibrate from (the message says what is missing)."""


def human_labels(project: Project, pairs) -> dict[int, tuple[str, str]]:
    """``{pair id: (value, source)}`` with source ``gold`` or ``votes`` (majority of counted votes)."""
    out = {pid: (value, "gold") for pid, value in
           Adjudication.objects.filter(pair__in=pairs).values_list("pair_id", "value")}
    votes: dict[int, list[str]] = defaultdict(list)
    for pid, value in qc.counted_labels(project).filter(pair__in=pairs).values_list("pair_id", "value"):
        if pid not in out:
            votes[pid].append(value)
    for pid, values in votes.items():
        value = majority_value(values)
        if value is not None:
            out[pid] = (value, "votes")
    return out


def _labelled(pairs, project: Project):
    """The pairs with gold or with a counted vote (subqueries: no id lists, whatever the size)."""
    return pairs.filter(Q(gold__isnull=False) | Q(pk__in=qc.counted_labels(project).values("pair_id")))


def _scored_pairs(project: Project, run: int | None):
    """The project's pairs with a score: the run's predictions' scores, or (no run) the latest ones."""
    qs = CandidatePair.objects.filter(article__project=project)
    if run is None:
        return qs.filter(score__isnull=False)
    return qs.filter(pk__in=Prediction.objects.filter(run_id=run, score__isnull=False).values("pair_id"))


def _scores(project: Project, pairs, run: int | None):
    """``(pair id, score)`` rows: the run's prediction of each pair, or the pair's latest score."""
    if run is None:
        return pairs.values_list("pk", "score")
    return Prediction.objects.filter(run_id=run, pair__in=pairs, score__isnull=False).values_list("pair_id", "score")


def run_choices(project: Project) -> list[dict]:
    """The project's runs, newest first, with how many of their scored pairs have a human label."""
    labelled = _labelled(CandidatePair.objects.filter(article__project=project), project)
    rows = (Prediction.objects.filter(run__project=project, score__isnull=False, pair__in=labelled)
            .order_by().values("run_id").annotate(n=Count("pair_id", distinct=True)))
    per_run = {r["run_id"]: r["n"] for r in rows}
    return [{"id": r.pk, "method": r.method, "status": r.status, "labelled_pairs": per_run.get(r.pk, 0)}
            for r in AlignmentRun.objects.filter(project=project).order_by("-created_at", "-pk")]


def default_run(project: Project) -> int | None:
    """The newest run with labelled scored pairs (scores of different runs are not comparable)."""
    for choice in run_choices(project):
        if choice["labelled_pairs"]:
            return choice["id"]
    return None


def labelled_scores(project: Project, run: int | None) -> list[tuple[float, str, str]]:
    """``[(score, value, class), ...]`` of the run's scored pairs that have a human label."""
    if project.label_scheme.kind == LabelScheme.LIKERT:
        return []
    counts_as = {v["value"]: v.get("counts_as", "not") for v in project.label_scheme.values}
    pairs = _scored_pairs(project, run)
    labels = human_labels(project, pairs)
    return [(float(score), labels[pid][0], counts_as.get(labels[pid][0], "not"))
            for pid, score in _scores(project, _labelled(pairs, project), run) if pid in labels]


def box_stats(scores: list[float]) -> dict | None:
    """Five-number summary, mean and Tukey whiskers (1.5 IQR), in the shape the Chart.js box-plot
    plugin accepts for pre-computed data.

    Example:
        >>> s = box_stats([0.1, 0.2, 0.3, 0.4, 2.0])
        >>> s["median"], s["whiskerMax"], s["outliers"]
        (0.3, 0.4, [2.0])
    """
    if not scores:
        return None
    x = np.sort(np.asarray(scores, dtype=np.float64))
    q1, median, q3 = (float(v) for v in np.percentile(x, [25, 50, 75]))
    iqr = q3 - q1
    inside = x[(x >= q1 - 1.5 * iqr) & (x <= q3 + 1.5 * iqr)]
    outliers = x[(x < q1 - 1.5 * iqr) | (x > q3 + 1.5 * iqr)]
    return {"min": float(x[0]), "q1": q1, "median": median, "q3": q3, "max": float(x[-1]), "mean": float(x.mean()),
            "whiskerMin": float(inside[0]), "whiskerMax": float(inside[-1]),
            "outliers": [round(float(v), 6) for v in outliers[:MAX_OUTLIERS]]}


def thresholds_from(data: list[tuple[float, str, str]], method: str) -> dict:
    """Thresholds for the ``aligned`` and ``partial`` classes from ``(score, value, class)`` rows.

    ``mean-valid``: aligned = mean score of pairs counting as aligned (WIVICO's rule), partial = mean
    of partial pairs (capped at aligned). ``max-f1``: aligned = the cut maximising F1 of *aligned*
    vs the rest; partial = the cut maximising F1 of *aligned + partial* vs not (capped at aligned).
    Raises :class:`CalibrationError` without any aligned pair.

    Example:
        >>> rows = [(0.9, "a", "aligned"), (0.7, "a", "aligned"), (0.5, "p", "partial"), (0.2, "n", "not")]
        >>> thresholds_from(rows, "mean-valid")["aligned"], thresholds_from(rows, "max-f1")["partial"]
        (0.8, 0.5)
    """
    if method not in METHODS:
        raise CalibrationError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    scores = np.asarray([s for s, _, _ in data], dtype=np.float64)
    classes = [c for _, _, c in data]
    counts = {c: classes.count(c) for c in ("aligned", "partial", "not")}
    if not counts["aligned"]:
        raise CalibrationError("no labelled pair with a score counts as aligned (valid): label or adjudicate "
                               "some pairs of this run first")
    aligned_mask = np.asarray([c == "aligned" for c in classes])
    positive_mask = np.asarray([c in ("aligned", "partial") for c in classes])
    out: dict = {"method": method, "pairs": counts}
    if method == "mean-valid":
        out["aligned"] = float(scores[aligned_mask].mean())
        out["partial"] = min(out["aligned"], float(scores[np.asarray([c == "partial" for c in classes])].mean())) \
            if counts["partial"] else None
        return out
    from workers.engine.metrics import tune_threshold

    strict = tune_threshold(scores, aligned_mask)
    lenient = tune_threshold(scores, positive_mask)
    out["aligned"] = strict.threshold
    out["partial"] = min(strict.threshold, lenient.threshold) if counts["partial"] else None
    out["f1"] = {"aligned": {"precision": strict.precision, "recall": strict.recall, "f1": strict.f1},
                 "aligned+partial": {"precision": lenient.precision, "recall": lenient.recall, "f1": lenient.f1}}
    return out


def suggestions(data: list[tuple[float, str, str]]) -> dict[str, dict | None]:
    out: dict[str, dict | None] = {}
    for method in METHODS:
        try:
            out[method] = thresholds_from(data, method)
        except CalibrationError:
            out[method] = None
    return out


def score_distribution(project: Project, run: int | None = None) -> dict:
    """Scores of labelled pairs grouped by human label, with box-plot stats, the thresholds each
    method would give, and the thresholds stored now. ``run`` None picks :func:`default_run`."""
    choices = run_choices(project)
    if run is None:
        run = next((c["id"] for c in choices if c["labelled_pairs"]), None)
    elif not any(c["id"] == run for c in choices):
        raise CalibrationError(f"run #{run} is not a run of this project")
    data = labelled_scores(project, run)
    by_value: dict[str, list[float]] = defaultdict(list)
    for score, value, _ in data:
        by_value[value].append(score)
    groups = [{"value": v["value"], "name": v.get("name", v["value"]), "counts_as": v.get("counts_as"),
               "n": len(by_value.get(v["value"], [])), "stats": box_stats(by_value.get(v["value"], []))}
              for v in project.label_scheme.values] if project.label_scheme.kind != LabelScheme.LIKERT else []
    return {"run": run, "runs": choices, "pairs": len(data), "groups": groups,
            "suggested": suggestions(data), "current": (project.config or {}).get("thresholds")}


def calibrate(project: Project, method: str, run: int | None = None) -> dict:
    """Compute thresholds with ``method`` on the run's labelled pairs and store them in the project's
    config (``thresholds``; for mean-valid also WIVICO's 1:1 ``threshold``). Returns what was stored."""
    if run is None:
        run = default_run(project)
    elif not AlignmentRun.objects.filter(project=project, pk=run).exists():
        raise CalibrationError(f"run #{run} is not a run of this project")
    result = thresholds_from(labelled_scores(project, run), method)
    stored = {**result, "source_run": run, "computed_at": timezone.now().isoformat()}
    with transaction.atomic():
        locked = Project.objects.select_for_update().get(pk=project.pk)
        config = dict(locked.config or {})
        config["thresholds"] = stored
        if method == "mean-valid":
            wivico = {k: v for k, v in (config.get("wivico") or {}).items() if k != "thresholds"}
            # the propagated n:m cut-offs derive from the 1:1 one: dropped so the next run re-derives them
            wivico["threshold"] = stored["aligned"]
            if stored["partial"] is not None:
                wivico["partial_threshold"] = stored["partial"]
            else:  # an older cut-off may lie above the new threshold; the method's default applies
                wivico.pop("partial_threshold", None)
            wivico["derived_from"] = {"calibration": "mean-valid", "source_run": run, "pairs": result["pairs"]}
            config["wivico"] = wivico
        locked.config = config
        locked.save(update_fields=["config"])
    project.config = config
    return stored
