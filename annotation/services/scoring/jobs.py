"""Scoring jobs: the seed papers' filters and attributes over a project's candidate pairs (SPEC §5.4–5.7).

A request is parsed once, at the edge (the API, the ``score_pairs`` command), into a :class:`ScoringRequest`
(:func:`parse_request`: the kind's options as its :class:`~annotation.services.scoring.kinds.ScoringKind`
declares them, then what needs the project: its runs, reference projects, model versions and models);
:func:`start_scoring` queues it as a job and :func:`run_scoring_job` (the kind's background job) runs the
kind's runner. Each kind is one module of :mod:`annotation.services.scoring.kinds` (``access``, ``sum4simp``,
``wivico``, ``gain``, ``pivot``) on the shared helpers of :mod:`annotation.services.scoring.common`.

Every job is idempotent: a kind owns its feature-key prefix, and re-running it first removes the keys of that
prefix and then writes the new values (batch-wise, under a row lock), so re-delivery or a re-run leaves the
same state. Flags are stored as 1.0/0.0 so every attribute filters and sorts numerically.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from annotation.errors import DomainError
from annotation.models import CandidatePair, Job, ModelVersion, Project
from annotation.services.background import progress
from annotation.services.projects import job_access
from annotation.services.projects.creation import find_project
from annotation.services.scoring import kinds
from annotation.services.scoring.kinds import ProjectRef, ScoringKind
from workers.engine import OptionError, UnknownName, check_config


class ScoringRefused(DomainError, ValueError):
    """A scoring request refused before any job exists (the message says why; ``problems``: each bad
    option and why, ``valid``: the kind's options, when the options were at fault)."""

    def __init__(self, message: str, *, code: str = "bad_scoring_request", problems: dict[str, str] | None = None,
                 valid: list[str] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.problems = problems or {}
        self.valid = valid or []

    def payload(self) -> dict:
        body = super().payload()
        if self.problems:
            body.update(params=self.problems, valid_options=self.valid)
        return body


@dataclass(frozen=True)
class ScoringRequest:
    """A checked scoring request: its kind and its params (numbers typed, projects as ids)."""

    kind: ScoringKind
    params: dict[str, Any] = field(default_factory=dict)


def parse_request(project: Project, kind: str, params: Any = None, *, visible=None) -> ScoringRequest:
    """Check a scoring request of ``project`` against its kind's declaration.

    ``visible``: the projects the requester may name as reference projects (all when None).

    Raises:
        ScoringRefused: an unknown kind, a bad or unknown option, a missing or empty reference project,
            a run or model version of another project.
        ModelPathError: a ``model`` or ``parser`` the project may not name.
    """
    try:
        spec = kinds.get(kind)
    except UnknownName as exc:
        raise ScoringRefused(str(exc), code="unknown_scoring_kind") from None
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ScoringRefused("params must be a JSON object")
    schema = spec.schema()
    try:
        check_config(spec.name, schema, params)
    except OptionError as exc:
        raise ScoringRefused(str(exc), code="bad_scoring_params", problems=exc.problems, valid=exc.valid) from None
    floats = {o.name for o in schema if o.type == "float"}
    params = {k: float(v) if k in floats and v is not None else v for k, v in params.items()}
    if params.get("run") is not None and not project.runs.filter(pk=params["run"]).exists():
        raise ScoringRefused(f"run {params['run']} is not a run of project {project.name!r}")
    for option in schema:
        if isinstance(option, ProjectRef) and params.get(option.name) not in (None, ""):
            params[option.name] = _reference_project(option.name, params[option.name], visible)
    if spec.needs_reference:
        _check_model_version(project, spec, params)
    _check_models(project, params)
    if spec.check is not None:
        spec.check(project, params)
    return ScoringRequest(spec, params)


def _reference_project(name: str, value: int | str, visible) -> int:
    """The id of a reference project named by name or id; it must hold imported pairs."""
    what = name.replace("_", " ")
    try:
        ref = find_project(value, what, visible)
    except ValueError as exc:
        raise ScoringRefused(str(exc), code="reference_not_found") from None
    if not CandidatePair.objects.filter(article__project=ref, origin="import").exists():
        raise ScoringRefused(f"{what} {ref.name!r} has no imported pairs; import a pair corpus (e.g. .src/.dst "
                             "files) into it first", code="reference_without_pairs")
    return ref.pk


def _check_model_version(project: Project, spec: ScoringKind, params: dict) -> None:
    """A kind that fits a model is given a model version of its own kind or a reference project."""
    if params.get("model_version") is not None:
        if not ModelVersion.objects.filter(pk=params["model_version"], project=project, kind=spec.name).exists():
            raise ScoringRefused(f"model_version {params['model_version']} is not a {spec.name} of project "
                                 f"{project.name!r}")
    elif not params.get("reference_project"):
        raise ScoringRefused(f"{spec.name} needs reference_project (an imported pair corpus) or model_version",
                             code="reference_needed")


def _check_models(project: Project, params: dict) -> None:
    """A ``model`` (an encoder) or ``parser`` (a spaCy pipeline; ``auto``/``none``/blank as before)
    must be one the project may name (:func:`model_paths.check`: a packaged name, a path under
    ``MODEL_ROOTS``, or the project's own model version as ``version:<id>``)."""
    from annotation.services.projects import model_paths

    for name in ("model", "parser"):
        value = params.get(name)
        if value is None or (name == "parser" and value in ("", "auto", "none")):
            continue
        params[name] = model_paths.check(value, name, project)


def start_scoring(project: Project, request: ScoringRequest, *, user=None, enqueue: bool = True) -> Job:
    """Create the job of a parsed scoring request; queue it (after commit) unless ``enqueue`` is false."""
    from annotation.services.background import jobs

    if enqueue:
        return jobs.start_job(project, request.kind.name, params=request.params, user=user)
    return Job.objects.create(project=project, kind=request.kind.name, params=request.params, created_by=user)


# --- execution (worker) --------------------------------------------------------------------------

def run_scoring_job(job_id: int) -> None:
    """Execute a scoring job: claim it, run its kind, store result and timings (or the error)."""
    if not progress.claim(Job, job_id):
        return
    report = progress.reporter(Job, job_id)
    started = time.monotonic()
    try:
        job = Job.objects.select_related("project__label_scheme", "created_by").get(pk=job_id)
        spec = kinds.get(job.kind)
        # the creator's access now, not when it was queued: this project and its reference projects
        references = [job.params.get(o.name) for o in spec.schema() if isinstance(o, ProjectRef)]
        job_access.check(job.created_by, job.project, references)
        result = spec.run(job, report)
    except Exception as exc:  # noqa: BLE001 - stored on the job (errors as data), then re-raised for the log
        progress.fail(Job, job_id, exc)
        raise
    progress.succeed(Job, job_id, result=result, timings={"total_s": round(time.monotonic() - started, 3)})
