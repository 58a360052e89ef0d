"""The comparison of two runs as the API answers it: :func:`~annotation.services.alignment.run_comparison.compare`
and both runs' scores against exhaustive gold (issue 37: the first comparison of two runs of a million predictions
takes seconds of SQL, their scores seconds more).

A big project's (:func:`~annotation.services.review.review_state.is_big`) comparison of two finished runs that is
not stored yet is not computed while the request waits: :func:`api_comparison` starts one ``run-comparison`` job
(:func:`comparison_job`, which stores the comparison and keeps both runs' scores) and raises
:class:`~annotation.errors.BeingComputed` (the API answers ``202 Accepted``; the client asks again). A small
project's, a running run's (compared afresh every time) and a stored one's are answered at once, as before.
"""
from __future__ import annotations

from annotation.models import AlignmentRun, Job, RunComparison
from annotation.services.alignment import run_comparison
from annotation.services.review import review_state
from annotation.services.training import run_scores

COMPARISON_JOB = "run-comparison"


def api_comparison(old: AlignmentRun, new: AlignmentRun, *, pairs: bool = False, offset: int = 0,
                   limit: int = run_comparison.CHANGES_PAGE) -> dict:
    """:func:`~annotation.services.alignment.run_comparison.compare` with ``scores``: ``{"old", "new"}`` (each as
    :func:`~annotation.services.training.run_scores.api_scores`).

    Raises:
        ComparisonError: runs that cannot be compared, a negative offset.
        BeingComputed: a big project's finished runs whose comparison (or scores) nothing computed yet; its job
            started (one at a time)."""
    run_comparison.check(old, new)
    first = not is_stored(old, new) and run_comparison.finished_state(old, new) is not None
    if first and review_state.is_big(old.project):
        raise review_state.being_computed(old.project, f"the comparison of runs #{old.pk} and #{new.pk}",
                                          COMPARISON_JOB, {"old": old.pk, "new": new.pk})
    data = run_comparison.compare(old, new, pairs=pairs, offset=offset, limit=limit)
    data["scores"] = {"old": run_scores.api_scores(old), "new": run_scores.api_scores(new)}
    return data


def is_stored(old: AlignmentRun, new: AlignmentRun) -> bool:
    """Whether the comparison of the two runs is stored for their
    :func:`~annotation.services.alignment.run_comparison.finished_state` (then ``compare`` reads it: milliseconds,
    not the seconds of SQL of a first comparison at a million predictions)."""
    marks = run_comparison.finished_state(old, new)
    return marks is not None and RunComparison.objects.filter(old=old, new=new, state=marks).exists()


def comparison_job(job_id: int) -> None:
    """The ``run-comparison`` job: compare the two runs of its params (stored by ``compare``) and keep both runs'
    scores, so the API's next ask reads them."""
    from annotation.services.background import progress

    def compared(job: Job) -> dict:
        runs = AlignmentRun.objects.select_related("project__label_scheme").in_bulk([job.params["old"], job.params["new"]])
        old, new = runs[job.params["old"]], runs[job.params["new"]]
        run_comparison.compare(old, new)
        for run in (old, new):
            if run.is_finished:
                run_scores.run_scores(run)  # kept in the database (review_state.kept) for the API's next ask
        return {"old": old.pk, "new": new.pk}

    progress.run_job(job_id, compared)
