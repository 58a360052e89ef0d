"""The dashboard's score distribution kept per state of the data (issue 37: 9–12 s at a million pairs, on every
open of the dashboard, whose script asks for it).

:func:`~annotation.services.scoring.calibration.score_distribution` reads every run's labelled pairs (which run to
show) and the chosen run's scores and gold: it changes only when the data it reads do. :func:`distribution` keeps
it (``review_state.kept``: in the cache and the database) under the dashboard's data state
(:func:`annotation.services.review.review_state.state`: labels, gold, completions, articles, pairs, settings —
stored thresholds included —, memberships, runs), the highest prediction id (a running run's new scores) and the
run asked for. A big project's is computed by a ``score-distribution`` job (:func:`distribution_job`): after a change
the API answers the one kept before with ``as_of`` and ``updating: true``, and before any is kept ``202 Accepted``
(:class:`~annotation.errors.BeingComputed`); a small project's is computed while it answers, as before.
"""
from __future__ import annotations

import math
from typing import Any

from django.db.models import Max

from annotation.digest import digest
from annotation.models import AlignmentRun, Job, Prediction, Project
from annotation.services.review import review_state
from annotation.services.scoring import calibration

DISTRIBUTION_JOB = "score-distribution"


def _marks(project: Project, run: int | None) -> str:
    return digest([review_state.state(project), Prediction.objects.order_by().aggregate(last=Max("pk")), run])


def _finite(value: Any) -> Any:
    """``value`` with NaN and infinities as None (kept as JSON; an F1 of no positive pair is NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _compute(project: Project, run: int | None) -> dict:
    return _finite(calibration.score_distribution(project, run))


def distribution(project: Project, run: int | None = None) -> dict:
    """:func:`~annotation.services.scoring.calibration.score_distribution` of ``run`` (None: the newest run with
    labelled pairs), kept (module docstring), with ``as_of`` and ``updating``.

    Raises:
        CalibrationError: ``run`` is not a run of the project.
        BeingComputed: a big project's distribution that nothing computed yet (its job started; the API answers 202)."""
    if run is not None and not AlignmentRun.objects.filter(project=project, pk=run).exists():
        raise calibration.CalibrationError(f"run #{run} is not a run of this project")
    found = review_state.kept(project, f"score-distribution:{run or 'newest'}", lambda: _compute(project, run),
                              current=_marks(project, run),
                              refresh=review_state.Refresh(DISTRIBUTION_JOB, {"run": run}, "the score distribution"))
    return {**found.value, "as_of": found.as_of.isoformat(), "updating": not found.current}


def distribution_job(job_id: int) -> None:
    """The ``score-distribution`` job: compute the distribution of the run in its params and keep it."""
    from annotation.services.background import progress

    def computed(job: Job) -> dict:
        run = job.params.get("run")
        review_state.store(job.project, f"score-distribution:{run or 'newest'}", lambda: _compute(job.project, run),
                           _marks(job.project, run))
        return {"run": run}

    progress.run_job(job_id, computed)


__all__ = ["DISTRIBUTION_JOB", "distribution", "distribution_job"]
