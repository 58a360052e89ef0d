"""Score distributions per human label and the thresholds calibrated from them.

WIVICO (§3.2.2, Fig. 2) plots the SBERT score of 500 annotated W1:V1 pairs as one box per human
label (valid / partially valid / non-valid) and takes the **mean score of the valid pairs** (0.81
there) as the 1:1 cut-off, then propagates it to the other eight W_n:V_m configurations over the
corpus' window means. That rule (``mean-valid``) is offered only for a **wivico run**, on its 1:1
pairs: another method's scores (a Jaccard overlap, a CRF marginal) are on another scale, and its
mean would become WIVICO's SBERT cut-off. The nine cut-offs are propagated over the window means the
run recorded for all its document pairs (``run.result["run_level"]``). The alternative, for any run,
is the threshold that **maximises F1** of the model's predictions against the human labels
(:func:`workers.engine.metrics.tune_threshold`, the same search the heuristic aligners use on dev
data).

A pair's human label is its gold (:class:`~annotation.models.Adjudication`) when it has one, else
the majority of its counted votes (ties: unlabelled) — :func:`annotation.services.review.gold_reading.pair_gold`,
policy ``majority-or-single``. Classes come from the scheme's ``counts_as``.

:func:`calibrate` stores the result where later runs and jobs read it::

    project.config["thresholds"] = {"aligned": 0.81, "partial": 0.64, "method": "mean-valid",
                                    "source_run": 12, "pairs": {...}, "computed_at": "..."}
    project.config["wivico"] = {"threshold", "partial_threshold", "thresholds", "partial_thresholds",
                                "propagation", "derived_from"}   # mean-valid on a wivico run only
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation.errors import DomainError
from annotation.label_schemes import scheme_kind, value_classes
from annotation.models import AlignmentRun, CandidatePair, Prediction, Project
from annotation.services.review import gold_reading
from annotation.services.review.gold_reading import pair_gold

METHODS = ("mean-valid", "max-f1")
#: What the maximum-F1 threshold's F1 is computed over, as the dashboard says it (issue 28 §3).
MAX_F1_OVER = ("Maximum F1 is computed over the run's labelled pairs only — those with a score and a human label (gold, "
               "else the majority vote) — predicting each at or above the cut: pairs nobody labelled and sentence pairs "
               "the run never scored do not count, so the run's false positives among the implied not-aligned pairs are "
               "left out. It picks a threshold; it is not the run's precision and recall, which its page scores against "
               "exhaustive gold")
WIVICO_RULE = "mean-valid"
MAX_OUTLIERS = 200


class CalibrationError(DomainError, ValueError):
    """Nothing to calibrate from (the message says what is missing)."""


def _labelled(pairs, project: Project):
    """The pairs with gold or with a counted vote (subqueries: no id lists, whatever the size)."""
    return pairs.filter(Q(gold__isnull=False) | Q(pk__in=gold_reading.counted_labels(project).values("pair_id")))


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


def labelled_scores(project: Project, run: int | None, *, one_to_one: bool = False) -> list[tuple[float, str, str]]:
    """``[(score, value, class), ...]`` of the run's scored pairs that have a human label (only the
    1:1 pairs with ``one_to_one``)."""
    if not scheme_kind(project.label_scheme).gold:  # no value counts as a class
        return []
    counts_as = value_classes(project.label_scheme)
    pairs = _scored_pairs(project, run)
    if one_to_one:
        pairs = pairs.exclude(complex_key__contains=",").exclude(simple_key__contains=",")
    labels = {pid: gold.value for pid, gold in pair_gold(project, pairs).items()}
    return [(float(score), labels[pid], counts_as.get(labels[pid], "not"))
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
    from workers.engine import tune_threshold

    strict = tune_threshold(scores, aligned_mask)
    lenient = tune_threshold(scores, positive_mask)
    out["aligned"] = strict.threshold
    out["partial"] = min(strict.threshold, lenient.threshold) if counts["partial"] else None
    out["f1"] = {"aligned": {"precision": strict.precision, "recall": strict.recall, "f1": strict.f1},
                 "aligned+partial": {"precision": lenient.precision, "recall": lenient.recall, "f1": lenient.f1}}
    return out


def wivico_rule(project: Project, run: int | None) -> dict:
    """Whether WIVICO's rule applies to ``run``: ``{"available", "reason", "one_to_one_pairs"}``."""
    method = AlignmentRun.objects.filter(project=project, pk=run).values_list("method", flat=True).first()
    if method != "wivico":
        what = f"run #{run} is a {method} run" if method else "no run chosen"
        return {"available": False, "one_to_one_pairs": 0,
                "reason": f"WIVICO's rule is for wivico runs ({what}): the mean SBERT score of its valid 1:1 pairs "
                          "becomes the wivico cut-off, and other methods' scores are on other scales"}
    n = len(labelled_scores(project, run, one_to_one=True))
    return {"available": True, "one_to_one_pairs": n, "reason": None}


def suggestions(data: list[tuple[float, str, str]], one_to_one: list[tuple[float, str, str]] | None = None
                ) -> dict[str, dict | None]:
    """What each method would store; ``mean-valid`` from the 1:1 rows of a wivico run (None: not offered)."""
    out: dict[str, dict | None] = {}
    for method in METHODS:
        rows = one_to_one if method == WIVICO_RULE else data
        try:
            out[method] = thresholds_from(rows, method) if rows is not None else None
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
              for v in project.label_scheme.values] if scheme_kind(project.label_scheme).gold else []
    rule = wivico_rule(project, run)
    one_to_one = labelled_scores(project, run, one_to_one=True) if rule["available"] else None
    return {"run": run, "runs": choices, "pairs": len(data), "groups": groups, "wivico_rule": rule,
            "suggested": suggestions(data, one_to_one), "current": (project.config or {}).get("thresholds"),
            "wivico": (project.config or {}).get("wivico"), "max_f1_over": MAX_F1_OVER}


def calibrate(project: Project, method: str, run: int | None = None) -> dict:
    """Compute thresholds with ``method`` on the run's labelled pairs and store them in the project's
    config (``thresholds``). ``mean-valid`` is WIVICO's rule: only for a wivico run, on its labelled
    1:1 pairs, and it also stores WIVICO's 1:1 cut-offs and the eight others propagated from them.
    Returns what was stored.

    Raises:
        CalibrationError: run of another project, WIVICO's rule on a non-wivico run, no aligned pair.
    """
    if run is None:
        run = default_run(project)
    elif not AlignmentRun.objects.filter(project=project, pk=run).exists():
        raise CalibrationError(f"run #{run} is not a run of this project")
    if method == WIVICO_RULE:
        rule = wivico_rule(project, run)
        if not rule["available"]:
            raise CalibrationError(rule["reason"] + "; use max-f1 for this run")
    result = thresholds_from(labelled_scores(project, run, one_to_one=method == WIVICO_RULE), method)
    stored = {**result, "source_run": run, "computed_at": timezone.now().isoformat()}
    with transaction.atomic():
        locked = Project.objects.select_for_update().get(pk=project.pk)
        config = dict(locked.config or {})
        config["thresholds"] = stored
        if method == WIVICO_RULE:
            config["wivico"] = _wivico_cutoffs(config.get("wivico") or {}, stored, AlignmentRun.objects.get(pk=run))
        locked.config = config
        locked.save(update_fields=["config"])
    project.config = config
    return stored


def _wivico_cutoffs(previous: dict, stored: dict, run: AlignmentRun) -> dict:
    """WIVICO's config after a mean-valid calibration on ``run``: the 1:1 cut-offs and, propagated
    over the window means the run recorded for all its document pairs, every other configuration's."""
    from workers.engine import propagate_thresholds

    propagation = previous.get("propagation") or run.params.get("propagation") or "paper"
    wivico = {k: v for k, v in previous.items() if k not in ("thresholds", "partial_thresholds", "partial_threshold")}
    wivico.update(threshold=stored["aligned"], propagation=propagation)
    if stored["partial"] is not None:
        wivico["partial_threshold"] = stored["partial"]
    # else an older partial cut-off may lie above the new threshold: the method's default applies
    derived = {"calibration": WIVICO_RULE, "source_run": run.pk, "pairs": stored["pairs"]}
    means = ((run.result or {}).get("run_level") or {}).get("config_means") or {}
    if "1:1" in means:
        parsed = {tuple(int(x) for x in k.split(":")): float(v) for k, v in means.items()}
        partial = stored["partial"] if stored["partial"] is not None else stored["aligned"] - 0.15
        valid = propagate_thresholds(parsed, stored["aligned"], propagation)
        partials = propagate_thresholds(parsed, partial, propagation)
        key = lambda d: {f"{n}:{m}": v for (n, m), v in sorted(d.items())}  # noqa: E731
        wivico["thresholds"] = key(valid)
        wivico["partial_thresholds"] = key({c: min(v, valid[c]) for c, v in partials.items()})
        derived.update(config_means=means, document_pairs=(run.result or {}).get("run_level", {}).get("document_pairs"))
    else:  # a run from before run-level means were recorded: the next wivico run propagates over its own
        derived["propagated"] = f"at the next wivico run (run #{run.pk} recorded no window means)"
    wivico["derived_from"] = derived
    return wivico
