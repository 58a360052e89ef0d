"""Scoring jobs: the seed papers' filters and attributes over a project's candidate pairs (SPEC §5.4–5.7).

This module checks a request, queues a job and runs it (:func:`run_scoring_job`, the background
registry's entry); each kind lives in its own module (``access``, ``sum4simp``, ``wivico``, ``gain``,
``pivot``) on the shared helpers of :mod:`annotation.services.scoring.common`.

Five job kinds, each a :class:`~annotation.models.Job` run by a thin Celery task:

* ``access-attributes`` — the four ACCESS control attributes (MUSS §3.2) of every pair, stored as
  ``access_char_ratio``, ``access_lev_sim``, ``access_word_rank_ratio`` and, with a dependency
  parser for the project's language, ``access_dep_depth_ratio``.
* ``sum4simp-filter`` — fits the Sum4Simp simplicity filter on a *reference project* (its imported
  pairs, e.g. a WikiLarge ``.src/.dst`` import), saves the fit as a ``ModelVersion`` (JSON under
  ``MODEL_ROOT``) and stores ``sum4simp_<attribute>``, ``sum4simp_t_<attribute>``, ``sum4simp_T``
  and ``sum4simp_keep`` (1.0/0.0) on every pair.
* ``wivico-thresholds`` — the WIVICO 1:1 cut-off = mean SBERT cosine of a *wivico run's* W1:V1
  pairs annotated as valid (a value whose ``counts_as`` is ``aligned``; ``run``, default the newest
  wivico run with such pairs), propagated to the n:m configurations with the paper's decreasing
  shift over the window means of every document pair that run aligned; all nine valid and partial
  cut-offs are stored in ``project.config["wivico"]`` where later ``wivico`` runs pick them up.
* ``gain-classifier`` — trains WIVICO's simplicity-gain FFNN on a reference project (positives =
  its pairs, negatives = the same pairs swapped), saves it as a ``ModelVersion`` (torch file under
  ``MODEL_ROOT``), stores ``gain_prob`` on every pair and reports counts per cut-off 0.5…0.9.
* ``pivot-select`` — the pivot-translation selectors (BLEU ≥ 15, FRES gain ≥ 10) over every pair:
  ``pivot_bleu``, ``pivot_fres_complex``, ``pivot_fres_simple``, ``pivot_fres_gain``,
  ``pivot_swapped`` and ``pivot_keep``.

SARI references (Sum4Simp): the paper uses the outputs of a simplification model (ACCESS trained
on WikiLarge) on the source sentences as references. Here they come from an optional
``refs_project``: an imported pair corpus whose complex sides are source sentences and whose
simple sides are their reference simplifications (matched by complex text after
``workers.engine.text.normalise``, punctuation kept). The pairs' own simple sides are *not* used:
SARI of a target against itself is maximal for every pair, so the normal fit would be degenerate. Without references the SARI attribute is left
out and T is rescaled over the other three (see :mod:`workers.engine.simplicity.sum4simp_filter`).

Every job is idempotent: a kind owns its feature-key prefix, and re-running it first removes the
keys of that prefix and then writes the new values (batch-wise, under a row lock), so re-delivery
or a re-run leaves the same state. Flags are stored as 1.0/0.0 so every attribute filters and sorts
numerically.
"""
from __future__ import annotations

import time
from collections.abc import Callable

from annotation.models import CandidatePair, Job, ModelVersion, Project
from annotation.services.background import progress
from annotation.services.projects import job_access
from annotation.services.projects.creation import find_project
from annotation.services.scoring.access import access_job
from annotation.services.scoring.common import ProgressFn
from annotation.services.scoring.gain import gain_job
from annotation.services.scoring.pivot import pivot_job
from annotation.services.scoring.sum4simp import sum4simp_job
from annotation.services.scoring.wivico import wivico_job

KINDS: tuple[str, ...] = ("access-attributes", "sum4simp-filter", "wivico-thresholds", "gain-classifier", "pivot-select")
COMMON_KEYS = {"run", "origin"}
KEYS: dict[str, set[str]] = {
    "access-attributes": {"parser"},
    "sum4simp-filter": {"reference_project", "refs_project", "model_version", "threshold"},
    "wivico-thresholds": {"propagation", "model", "max_document_pairs"},
    "gain-classifier": {"reference_project", "model_version", "epochs", "parser", "seed"},
    "pivot-select": {"h_bleu", "h_fres", "orient"},
}
NEEDS_REFERENCE = {"sum4simp-filter", "gain-classifier"}


# --- validation (API, command) -------------------------------------------------------------------

def _number(params: dict, name: str, kind: type, low: float | None = None, high: float | None = None) -> None:
    if name not in params:
        return
    value = params[name]
    try:
        if isinstance(value, bool):
            raise TypeError
        value = kind(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a {'whole number' if kind is int else 'number'}, got {value!r}") from None
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name} must be between {low} and {high}, got {value}")
    params[name] = value


def validate(project: Project, kind: str, params: dict | None, *, visible=None) -> dict:
    """Check a scoring request and return its normalised params (project references as ids).

    Raises:
        ValueError: unknown kind or key, bad value, missing reference project, run of another project.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown scoring kind {kind!r}; choose one of: {', '.join(KINDS)}")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ValueError("params must be a JSON object")
    params = dict(params)
    allowed = COMMON_KEYS | KEYS[kind]
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ValueError(f"unknown parameter(s) {', '.join(unknown)} for {kind}; valid: {', '.join(sorted(allowed))}")
    if params.get("run") is not None:
        _number(params, "run", int)
        if not project.runs.filter(pk=params["run"]).exists():
            raise ValueError(f"run {params['run']} is not a run of project {project.name!r}")
    if "origin" in params and not isinstance(params["origin"], str):
        raise ValueError("origin must be a string (model, candidate, manual, derived, import)")
    _check_references(project, kind, params, visible)
    _check_models(project, params)
    _number(params, "threshold", float, 0.0, 1.0)
    _number(params, "epochs", int, 1, 1000)
    _number(params, "seed", int)
    _number(params, "h_bleu", float, 0.0, 100.0)
    _number(params, "h_fres", float, -200.0, 200.0)
    _number(params, "max_document_pairs", int, 1, None)
    if "orient" in params and not isinstance(params["orient"], bool):
        raise ValueError("orient must be true or false")
    _check_kind(project, kind, params)
    return params


def _check_references(project: Project, kind: str, params: dict, visible) -> None:
    """Reference projects (found by name or id, as ids in ``params``) and a kind's model version."""
    for name in ("reference_project", "refs_project"):
        if params.get(name) not in (None, ""):
            ref = find_project(params[name], name.replace("_", " "), visible)
            if not CandidatePair.objects.filter(article__project=ref, origin="import").exists():
                raise ValueError(f"{name.replace('_', ' ')} {ref.name!r} has no imported pairs; import a pair "
                                 "corpus (e.g. .src/.dst files) into it first")
            params[name] = ref.pk
    if kind in NEEDS_REFERENCE:
        if params.get("model_version") not in (None, ""):
            _number(params, "model_version", int)
            wanted = "sum4simp-filter" if kind == "sum4simp-filter" else "gain-classifier"
            if not ModelVersion.objects.filter(pk=params["model_version"], project=project, kind=wanted).exists():
                raise ValueError(f"model_version {params['model_version']} is not a {wanted} of project {project.name!r}")
        elif not params.get("reference_project"):
            raise ValueError(f"{kind} needs reference_project (an imported pair corpus) or model_version")


def _check_models(project: Project, params: dict) -> None:
    """A ``model`` (an encoder) or ``parser`` (a spaCy pipeline; ``auto``/``none``/blank as before)
    must be one the project may name (:func:`model_paths.check`: a packaged name, a path under
    ``MODEL_ROOTS``, or the project's own model version as ``version:<id>``)."""
    from annotation.services.projects import model_paths

    for name in ("model", "parser"):
        value = params.get(name)
        if value is None or (name == "parser" and value in ("", "auto", "none")):
            continue
        if not isinstance(value, str):
            raise ValueError(f"{name} must be a string, got {value!r}")
        params[name] = model_paths.check(value, name, project)


def _check_kind(project: Project, kind: str, params: dict) -> None:
    """What only one kind checks: pivot's FRES language, WIVICO's source run and propagation."""
    if kind == "pivot-select":
        from workers.engine import FRES_COEFFICIENTS

        if project.language not in FRES_COEFFICIENTS:
            raise ValueError(f"no FRES coefficients for the project's language {project.language!r}; "
                             f"supported: {', '.join(sorted(FRES_COEFFICIENTS))}")
    if kind == "wivico-thresholds" and params.get("run") is not None:
        method = project.runs.get(pk=params["run"]).method
        if method != "wivico":
            raise ValueError(f"run {params['run']} is a {method} run; WIVICO's cut-offs are learnt from a wivico run's "
                             "annotated 1:1 pairs")
    if kind == "wivico-thresholds" and "propagation" in params:
        from workers.engine import PROPAGATION_METHODS

        if params["propagation"] not in PROPAGATION_METHODS:
            raise ValueError(f"unknown propagation {params['propagation']!r}; choose one of: {', '.join(PROPAGATION_METHODS)}")


def start_scoring(project: Project, kind: str, params: dict | None = None, *, user=None, visible=None,
                  enqueue: bool = True) -> Job:
    """Validate and create a scoring job; queue it (after commit) unless ``enqueue`` is false."""
    from annotation.services.background import jobs

    params = validate(project, kind, params, visible=visible)
    if enqueue:
        return jobs.start_job(project, kind, params=params, user=user)
    return Job.objects.create(project=project, kind=kind, params=params, created_by=user)


# --- execution (worker) --------------------------------------------------------------------------

def run_scoring_job(job_id: int) -> None:
    """Execute a scoring job: claim it, run its kind, store result and timings (or the error)."""
    if not progress.claim(Job, job_id):
        return
    report = progress.reporter(Job, job_id)
    started = time.monotonic()
    try:
        job = Job.objects.select_related("project__label_scheme", "created_by").get(pk=job_id)
        # the creator's access now, not when it was queued: this project and its reference projects
        job_access.check(job.created_by, job.project, [job.params.get(k) for k in ("reference_project", "refs_project")])
        result = RUNNERS[job.kind](job, report)
    except Exception as exc:  # noqa: BLE001 - stored on the job (errors as data), then re-raised for the log
        progress.fail(Job, job_id, exc)
        raise
    progress.succeed(Job, job_id, result=result, timings={"total_s": round(time.monotonic() - started, 3)})


RUNNERS: dict[str, Callable[[Job, ProgressFn], dict]] = {
    "access-attributes": access_job,
    "sum4simp-filter": sum4simp_job,
    "wivico-thresholds": wivico_job,
    "gain-classifier": gain_job,
    "pivot-select": pivot_job,
}
