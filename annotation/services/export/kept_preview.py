"""The export preview kept per state of the data it reads, and a big project's computed by a job (issue 37).

:func:`annotation.services.export.compute_preview` reads every pair of the export (a gold preview: every article
with evidence, 13 s at a million pairs; an auto preview: a run's million pairs, its 20-s budget). :func:`preview`
keeps the answer per state of what it reads (a gold one as a sum of stored per-article parts, ``preview_parts.py``),
and for the API (``background``) leaves a big project's first one to an ``export-preview`` job (:func:`preview_job`):
the API answers 202 (:class:`~annotation.errors.BeingComputed`) until it is kept.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict

from django.db.models import Count, Max

from annotation.digest import digest
from annotation.models import Job, Prediction, Project, Split, SplitChange
from annotation.services.background import progress as job_progress
from annotation.services.export.options import ExportOptions
from annotation.services.review import review_state

Compute = Callable[..., dict]
"""``compute_preview(project, options, *, max_seconds, visible=None)`` of the package (passed in: no import circle)."""


def preview(project: Project, options: ExportOptions, compute_preview: Compute, *, max_seconds: float, visible=None,
            background: bool = False) -> dict:
    """:func:`compute_preview`, kept per state of the data it reads (issue 37: at a million pairs it
    reads every pair for 20 s; its figures change only when somebody labels, adjudicates, completes,
    imports, aligns, assigns splits or changes settings). The key is :func:`review_state.state` (the
    dashboard's marks: labels, gold, completions, articles, pairs, sentences, settings, memberships,
    runs), the splits' marks and the options, so no writer invalidates anything. A gold preview is the
    sum of stored per-article parts (``preview_parts.py``): after a label only that article is read
    again, and a restart loses nothing. ``dedup`` options read other projects (whatever the user may
    see), so those previews are computed afresh. ``seconds`` is this call's time.

    ``background`` (the API's): a big project's first gold preview is left to a job (:func:`_unless_being_computed`),
    and so is every other kind's (an auto preview reads a run's million pairs: its 20-s budget, partial) — the one
    kept before, ``updating``, while the job computes the new one (:func:`_kept_preview`).

    Raises:
        BeingComputed: with ``background``, a big project's first preview of these options (its job started)."""
    if options.dedup:
        return compute_preview(project, options, max_seconds=max_seconds, visible=visible)
    started = time.monotonic()
    current = _preview_state(project, options, max_seconds)
    if options.kind == "gold":
        if background:
            _unless_being_computed(project, options, current)
        try:
            found = review_state.cached(project, "export-preview",
                                        lambda: _gold_preview(project, options, max_seconds, current), current=current)
        except _NotKept as stopped:  # the budget ran out: what is stored so far, and the next call goes on
            found = stopped.answer
    elif background and review_state.is_big(project):
        found = _kept_preview(project, options, current)
    else:
        found = review_state.cached(project, "export-preview",
                                    lambda: compute_preview(project, options, max_seconds=max_seconds), current=current)
    return {**found, "seconds": round(time.monotonic() - started, 3)}


PREVIEW_JOB = "export-preview"


def _preview_state(project: Project, options: ExportOptions, max_seconds: float) -> str:
    """The digest a preview is kept under (:func:`preview`): the data's marks, the splits' marks, the highest prediction
    id (an auto preview reads a run's predictions) and the options."""
    marks = [review_state.state(project), max_seconds, json.dumps(asdict(options), sort_keys=True, default=str)]
    marks += [m.objects.order_by().aggregate(n=Count("pk"), last=Max("pk")) for m in (Split, SplitChange)]
    marks.append(Prediction.objects.order_by().aggregate(last=Max("pk")))
    return digest(marks)


def _unless_being_computed(project: Project, options: ExportOptions, current: str) -> None:
    """Issue 37: a big project's first gold preview (no answer kept for these options yet, of any state) reads every
    article with evidence: 13 s at a million pairs, over the 1-s budget of a request. Then the ``export-preview``
    job computes it (:func:`preview_job`) and this raises :class:`~annotation.errors.BeingComputed` (the API answers
    202). Once one is kept, a later state is computed while the request waits from the stored per-article parts
    (only the articles whose evidence changed are read again: ``preview_parts.py``)."""
    from annotation.services.export import preview_parts

    kept = review_state.cached_value(project, "export-preview", current) is not None
    if kept or preview_parts.has_answer(project, options) or not review_state.is_big(project):
        return
    raise review_state.being_computed(project, "the export preview", PREVIEW_JOB, {"options": options.as_dict()})


def _kept_preview(project: Project, options: ExportOptions, current: str) -> dict:
    """A big project's preview of a kind without stored parts (auto): the one kept for ``current``, else the one kept
    before with ``updating: true`` after starting the ``export-preview`` job (one at a time, at most once a minute:
    ``review_state.start_refresh``), else :class:`~annotation.errors.BeingComputed` (its job started)."""
    from annotation.services.export import preview_parts

    kept = preview_parts.latest_answer(project, options)
    params = {"options": options.as_dict()}
    if kept is None:
        raise review_state.being_computed(project, "the export preview", PREVIEW_JOB, params)
    state, answer = kept
    if state == current:
        return {**answer, "updating": False}
    review_state.start_refresh(project, PREVIEW_JOB, params)
    return {**answer, "updating": True}


def preview_job(job_id: int, compute_preview: Compute, api_seconds: float) -> None:
    """The ``export-preview`` job: the preview of the options in its params (gold: every article read, no budget;
    another kind: :func:`compute_preview` with no budget), kept for the state the API computes it under
    (:func:`preview` with the API's budget, ``api_seconds``)."""
    from annotation.services.export import preview_parts

    def computed(job: Job) -> dict:
        options = ExportOptions.stored(job.params["options"])
        current = _preview_state(job.project, options, api_seconds)
        if options.kind == "gold":
            found = preview_parts.preview(job.project, options, max_seconds=float("inf"))
        else:
            started = time.monotonic()
            found = {**compute_preview(job.project, options, max_seconds=float("inf")),
                     "seconds": round(time.monotonic() - started, 3)}
        preview_parts.keep_answer(job.project, options, current, found)
        return {"pairs": found.get("pairs"), "seconds": found["seconds"]}

    job_progress.run_job(job_id, computed)


def _gold_preview(project: Project, options: ExportOptions, max_seconds: float, state: str) -> dict:
    """The answer stored for this ``state`` of the data (after a restart), else the stored parts' preview,
    stored; one that stopped at its budget is not kept (the next call goes on)."""
    from annotation.services.export import preview_parts

    found = preview_parts.answer_of(project, options, state)
    if found is not None:
        return found
    found = preview_parts.preview(project, options, max_seconds=max_seconds)
    if found["partial"]:
        raise _NotKept(found)
    preview_parts.keep_answer(project, options, state, found)
    return found


class _NotKept(Exception):  # noqa: N818 - carries a partial answer past the cache, not an error
    def __init__(self, answer: dict) -> None:
        super().__init__("partial preview")
        self.answer = answer


__all__ = ["PREVIEW_JOB", "preview", "preview_job"]
