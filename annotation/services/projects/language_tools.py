"""A project's language tools — the sentence encoder and the spaCy pipeline, each a name or a path —
and the features that runs and jobs could not compute without them.

Both are project settings (``project.config["encoder"]`` and ``["spacy_pipeline"]``); left blank,
the encoder is the server's ``ALIGNAPP_ENCODER`` (else the bundled all-MiniLM-L6-v2) and the
pipeline is the language's default spaCy package (``workers.engine.simplicity.parsing``). A run or
scoring job that needs a pipeline it cannot load still finishes, and writes what it left out into
its result as ``missing_features: {feature: why}``; :func:`missing_features` gathers them for the
dashboard and the export manifest, so a feature is never silently absent.

Nothing here loads a model (settings and dashboard pages are web requests): whether a pipeline is
installed is answered from the installed packages, or from the folder a path names. Which models a
project may name at all (packaged names, paths under ``MODEL_ROOTS``, its own model versions as
``version:<id>``) is :mod:`annotation.services.projects.model_paths`' one rule, applied on every write
and again when a run or job reads the setting.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

from django.conf import settings
from django.db import transaction

from annotation.errors import DomainError
from annotation.models import AlignmentRun, Job, Project, Status
from annotation.services.projects import model_paths

ENCODER = "encoder"
PIPELINE = "spacy_pipeline"
MAX_LENGTH = 500
BUNDLED_ENCODER_NAME = "all-MiniLM-L6-v2"
BUNDLED_ENCODER = f"{BUNDLED_ENCODER_NAME} (bundled)"  # as run results and manifests record it


class LanguageToolsError(DomainError, ValueError):
    """A refused encoder or pipeline value (the message says why)."""


def project_encoder(project: Project) -> str | None:
    """The sentence encoder runs and jobs of ``project`` use: its setting (a model version's folder
    for ``version:<id>``), else the server's ``ALIGNAPP_ENCODER``, else None (the bundled all-MiniLM-L6-v2).

    Raises:
        model_paths.ModelPathError: the stored setting is not (or no longer) an allowed model.
    """
    value = (project.config or {}).get(ENCODER)
    return model_paths.resolve(value, ENCODER, project) if value else (settings.DEFAULT_ENCODER or None)


def project_pipeline(project: Project) -> str | None:
    """The spaCy pipeline (name or path) for ``project``: its setting, else its language's default.

    Raises:
        model_paths.ModelPathError: the stored setting is not (or no longer) an allowed model.
    """
    from workers.engine import DEFAULT_PIPELINES

    value = (project.config or {}).get(PIPELINE)
    return model_paths.resolve(value, PIPELINE, project) if value else DEFAULT_PIPELINES.get(project.language)


def pipeline_status(name: str | None) -> tuple[bool, str]:
    """Whether a spaCy pipeline can be loaded (without loading it) and a short note."""
    if not name:
        return False, "no default spaCy pipeline for this language: set one by name or path"
    if _looks_like_path(name):
        folder = Path(name).expanduser()
        if (folder / "config.cfg").is_file():
            return True, f"folder {name}"
        return False, f"no spaCy pipeline folder at {name} (on this machine)"
    if importlib.util.find_spec("spacy") is None:
        return False, "spaCy is not installed"
    if importlib.util.find_spec(name) is None:
        return False, f"spaCy pipeline {name!r} is not installed (no runtime downloads)"
    return True, f"installed package {name}"


def encoder_status(name: str | None) -> tuple[bool | None, str]:
    """Whether the encoder is there: True/False for the bundled model and paths, None for a model
    name (resolved by sentence-transformers when a run loads it; offline it must be cached)."""
    if not name:
        return True, BUNDLED_ENCODER
    if _looks_like_path(name):
        return (True, f"folder {name}") if Path(name).expanduser().is_dir() else \
            (False, f"no model folder at {name} (on this machine)")
    return None, f"model name {name!r} (loaded by sentence-transformers at run time; offline it must be cached)"


def _looks_like_path(value: str) -> bool:
    return value.startswith(("/", "./", "../", "~")) or Path(value).expanduser().exists()


def describe(project: Project) -> dict:
    """What the settings page and the dashboard show about the project's language tools."""
    from workers.engine import DEFAULT_PIPELINES

    config = project.config or {}
    try:
        encoder = project_encoder(project)
        encoder_ok, encoder_note = encoder_status(encoder)
    except model_paths.ModelPathError as exc:  # a value stored before the rule: refused, not looked at
        encoder, encoder_ok, encoder_note = config.get(ENCODER), False, str(exc)
    try:
        pipeline = project_pipeline(project)
        pipeline_ok, pipeline_note = pipeline_status(pipeline)
    except model_paths.ModelPathError as exc:
        pipeline, pipeline_ok, pipeline_note = config.get(PIPELINE), False, str(exc)
    return {
        "language": project.language,
        "encoder": {"setting": config.get(ENCODER, ""), "used": encoder or BUNDLED_ENCODER_NAME,  # the pages add "(source)"
                    "source": "project" if config.get(ENCODER) else ("server" if settings.DEFAULT_ENCODER else "bundled"),
                    "available": encoder_ok, "note": encoder_note},
        "spacy_pipeline": {"setting": config.get(PIPELINE, ""), "used": pipeline,
                           "default": DEFAULT_PIPELINES.get(project.language),
                           "source": "project" if config.get(PIPELINE) else "language default",
                           "available": pipeline_ok, "note": pipeline_note},
    }


def clean(value: str, what: str) -> str:
    """A submitted name or path, stripped; blank means "use the default".

    Raises:
        LanguageToolsError: longer than :data:`MAX_LENGTH`, or with a line break or control character.
    """
    value = (value or "").strip()
    if len(value) > MAX_LENGTH:
        raise LanguageToolsError(f"The {what} must be a name or path of at most {MAX_LENGTH} characters.")
    if any(ord(ch) < 32 for ch in value):
        raise LanguageToolsError(f"The {what} must be one name or path, without line breaks or control characters.")
    return value


def checked(value: str, key: str, project: Project | None, *, database: bool = True) -> str:
    """``value`` cleaned (:func:`clean`) and allowed by :func:`model_paths.check` for ``key``
    (:data:`ENCODER` or :data:`PIPELINE`) in ``project`` (None: a project being created).

    Raises:
        LanguageToolsError: the one refusal message (it names the allowed roots, never whether a path exists).
    """
    value = clean(value, "sentence encoder" if key == ENCODER else "spaCy pipeline")
    try:
        return model_paths.check(value, key, project, database=database)
    except model_paths.ModelPathError as exc:
        raise LanguageToolsError(str(exc)) from None


def update(project: Project, *, encoder: str, spacy_pipeline: str) -> Project:
    """Store the project's encoder and spaCy pipeline (blank: the default), each a packaged name, a
    path under ``MODEL_ROOTS`` or one of the project's model versions (``version:<id>``).

    Raises:
        LanguageToolsError: a value that is not an allowed model (nothing is saved then).
    """
    values = {ENCODER: checked(encoder, ENCODER, project), PIPELINE: checked(spacy_pipeline, PIPELINE, project)}
    with transaction.atomic():
        locked = Project.objects.select_for_update().get(pk=project.pk)
        config = {k: v for k, v in (locked.config or {}).items() if k not in values}
        config.update({k: v for k, v in values.items() if v})
        locked.config = config
        locked.save(update_fields=["config"])
    project.config = config
    return project


def recorded_missing(result: dict | None) -> dict[str, str]:
    """``{feature: why}`` a run's or job's result records (older results: ACCESS ``skipped``)."""
    result = result or {}
    if isinstance(result.get("missing_features"), dict):
        return dict(result["missing_features"])
    skipped = result.get("skipped") or (result.get("access_attributes") or {}).get("skipped") or {}
    return dict(skipped) if isinstance(skipped, dict) else {}


def missing_features(project: Project, runs=None) -> list[dict]:
    """Features left out by the project's work: the given runs (default: the latest succeeded run
    of each method) and the latest succeeded scoring job of each kind, one row per feature and
    source: ``{"feature", "why", "source", "kind": "run"|"job", "id"}``."""
    if runs is None:
        runs = _latest(AlignmentRun.objects.filter(project=project, status=Status.SUCCEEDED), "method")
    jobs = _latest(Job.objects.filter(project=project, status=Status.SUCCEEDED), "kind")
    rows = []
    for run in runs:
        for feature, why in sorted(recorded_missing(run.result).items()):
            rows.append({"feature": feature, "why": why, "source": f"run #{run.pk} ({run.method})", "kind": "run",
                         "id": run.pk})
    for job in jobs:
        for feature, why in sorted(recorded_missing(job.result).items()):
            rows.append({"feature": feature, "why": why, "source": f"job #{job.pk} ({job.kind})", "kind": "job",
                         "id": job.pk})
    return rows


def _latest(queryset, field: str) -> list:
    seen: dict[str, object] = {}
    for row in queryset.order_by("-finished_at", "-pk"):
        seen.setdefault(getattr(row, field), row)
    return sorted(seen.values(), key=lambda r: r.pk)
