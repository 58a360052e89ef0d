"""The one schema of ``Project.config``: every key the app reads, its type and range.

The settings page (``project_settings``, ``guidelines``, ``language_tools``) and the API
(``PATCH /api/projects/<id>/ {"config": {...}}``) both check a config through :func:`validate`, and
each key's check is the one its own area uses when it reads the value (``qc.QcConfig.parse`` for ``qc``,
``paragraph_alignment.settings_for`` for the paragraph settings, the engine's option schema for
``wivico``...), so the API refuses exactly what the page refuses, and a value the API stores never
breaks a page or a run later. Unknown keys are refused with the list of valid ones.

>>> validate({"qc": {"overlap": 0}})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
annotation.services.settings.config_schema.ConfigError: qc: bad qc option(s): overlap: must be >= 1, got 0; valid: overlap (int in [1, 10], default 1), ...
>>> validate({"colour": "red"})
Traceback (most recent call last):
...
annotation.services.settings.config_schema.ConfigError: colour: unknown setting; valid: adjudicate, adjudicate_show_score, candidate_selection, candidates, default_model_version, encoder, guidelines, paragraph_alignment, paragraph_corrections, qc, queue_changes, queue_identical, queue_order, queue_run, queue_uncertainty, show_predictions, spacy_pipeline, splits, thresholds, wivico
"""
from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from annotation.errors import DomainError
from annotation.validation import MAX_ID, json_problem

UNCERTAINTY_SOURCES = ("model", "disagreement")
THRESHOLD_KEYS = ("aligned", "partial", "method", "pairs", "f1", "source_run", "computed_at")


class ConfigError(DomainError, ValueError):
    """Bad config values: ``errors`` maps each bad key to why (all of them at once)."""

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{key}: {why}" for key, why in errors.items()))


# --- One check per key: each raises ValueError with a message ---------------------------------

def _bool(value: Any) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"must be true or false, got {value!r}")


def _choice(options: Callable[[], tuple[str, ...]]) -> Callable[[Any], None]:
    def check(value: Any) -> None:
        valid = tuple(options())
        if value not in valid:
            raise ValueError(f"must be one of: {', '.join(valid)} (got {value!r})")
    return check


def _id(value: Any, *, nullable: bool = True) -> None:
    if value is None and nullable:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_ID:
        raise ValueError(f"must be an id (a positive integer), got {value!r}")


def _number(name: str, value: Any, *, nullable: bool = False) -> None:
    if value is None and nullable:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")


def _qc(value: Any) -> None:
    from annotation.services.review import qc

    qc.QcConfig.parse(value)


def _adjudication_modes() -> tuple[str, ...]:
    from annotation.services.review.adjudication import MODES

    return tuple(MODES)


def _correction_modes() -> tuple[str, ...]:
    from annotation.services.editing.paragraph_correction import CORRECTION_MODES

    return tuple(CORRECTION_MODES)


def _queue_orders() -> tuple[str, ...]:
    from annotation.services.review.queue_serving import ORDERS

    return tuple(ORDERS)


def _tool(what: str, key: str) -> Callable[[Any], None]:
    def check(value: Any) -> None:
        from annotation.services.projects import language_tools, model_paths

        if not isinstance(value, str):
            raise ValueError(f"must be a name or path (a string), got {value!r}")
        value = language_tools.clean(value, what)
        if not value.startswith(model_paths.VERSION_PREFIX):  # a version id is checked against the project
            language_tools.checked(value, key, None, database=False)
    return check


def _guidelines(value: Any) -> None:
    from annotation.services.projects.guidelines import MAX_LENGTH

    if not isinstance(value, str):
        raise ValueError("must be Markdown text (a string)")
    if len(value) > MAX_LENGTH:
        raise ValueError(f"at most {MAX_LENGTH:,} characters (got {len(value):,})")


def _paragraph_settings(value: Any, config: dict) -> None:
    """``paragraph_alignment``, ``candidate_selection`` and ``candidates`` are read together."""
    from annotation.services.alignment.paragraph_alignment import settings_for

    settings_for(SimpleNamespace(config=config))


def _splits(value: Any) -> None:
    from annotation.services.export.splits import validate_policy

    if not isinstance(value, dict):
        raise ValueError("must be an object (the split policy)")
    validate_policy(value)


def _thresholds(value: Any) -> None:
    """What ``calibration.calibrate`` stores: the cut-offs, the labelled pairs they came from."""
    from annotation.services.scoring.calibration import METHODS

    if not isinstance(value, dict):
        raise ValueError(f"must be an object with keys {', '.join(THRESHOLD_KEYS)}")
    unknown = sorted(set(value) - set(THRESHOLD_KEYS))
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(unknown)}; valid: {', '.join(THRESHOLD_KEYS)}")
    _number("aligned", value.get("aligned"), nullable="aligned" not in value)
    _number("partial", value.get("partial"), nullable=True)
    if "method" in value and value["method"] not in METHODS:
        raise ValueError(f"method must be one of: {', '.join(METHODS)} (got {value['method']!r})")
    _id(value.get("source_run"))
    for key in ("pairs", "f1"):
        if key in value and not isinstance(value[key], dict):
            raise ValueError(f"{key} must be an object")
    if "computed_at" in value and not isinstance(value["computed_at"], str):
        raise ValueError("computed_at must be a date-time (a string)")


def _wivico(value: Any) -> None:
    """WIVICO's cut-offs (``scoring``'s wivico-thresholds job, ``calibration``): its own options, as a run takes them."""
    from annotation.services.alignment.run_options import method_options
    from annotation.services.alignment.run_setup import PROJECT_METHOD_KEYS
    from workers.engine import check_config

    if not isinstance(value, dict):
        raise ValueError(f"must be an object with keys {', '.join(PROJECT_METHOD_KEYS['wivico'])}, derived_from")
    keys = PROJECT_METHOD_KEYS["wivico"]
    unknown = sorted(set(value) - {*keys, "derived_from"})
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(unknown)}; valid: {', '.join(keys)}, derived_from")
    if "derived_from" in value and not isinstance(value["derived_from"], dict):
        raise ValueError("derived_from must be an object")
    schema = [o for o in method_options("wivico") if o.name in keys]
    check_config("wivico", schema, {k: v for k, v in value.items() if k in keys})


def _queue_changes(value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, dict) or set(value) != {"old", "new"}:
        raise ValueError("must be {\"old\": <run id>, \"new\": <run id>} or null")
    _id(value["old"], nullable=False)
    _id(value["new"], nullable=False)
    if value["old"] == value["new"]:
        raise ValueError("old and new must be two different runs")


#: key → its check (``config`` is passed to the checks that read several keys together)
CHECKS: dict[str, Callable[..., None]] = {
    "show_predictions": _bool,
    "adjudicate": _choice(_adjudication_modes),
    "adjudicate_show_score": _bool,
    "paragraph_corrections": _choice(_correction_modes),
    "qc": _qc,
    "encoder": _tool("sentence encoder", "encoder"),
    "spacy_pipeline": _tool("spaCy pipeline", "spacy_pipeline"),
    "guidelines": _guidelines,
    "thresholds": _thresholds,
    "wivico": _wivico,
    "default_model_version": _id,
    "queue_run": _id,
    "queue_changes": _queue_changes,
    "queue_identical": _bool,
    "queue_order": _choice(_queue_orders),
    "queue_uncertainty": _choice(lambda: UNCERTAINTY_SOURCES),
    "paragraph_alignment": _paragraph_settings,
    "candidate_selection": _paragraph_settings,
    "candidates": _paragraph_settings,
    "splits": _splits,
}
TOGETHER = ("paragraph_alignment", "candidate_selection", "candidates")
#: keys that name another object of the project (checked against the database when a project is given)
REFERENCES = ("default_model_version", "queue_run", "queue_changes", "thresholds", "encoder", "spacy_pipeline")


def problems(config: Any, keys: list[str] | None = None) -> dict[str, str]:
    """``{key: why}`` for every bad key of ``config`` (only ``keys`` when given), unknown keys included."""
    if not isinstance(config, dict):
        return {"config": f"must be a JSON object of settings; valid keys: {', '.join(sorted(CHECKS))}"}
    found: dict[str, str] = {}
    problem = json_problem(config)
    if problem:
        return {"config": problem}
    for key in sorted(config) if keys is None else keys:
        if key not in config:
            continue
        check = CHECKS.get(key)
        if check is None:
            found[key] = f"unknown setting; valid: {', '.join(sorted(CHECKS))}"
            continue
        try:
            check(config[key], config) if key in TOGETHER else check(config[key])
        except ValueError as exc:
            found[key] = str(exc)
    return found


def validate(config: Any, *, keys: list[str] | None = None, project=None) -> dict:
    """``config`` unchanged when every key (only ``keys`` when given) is valid; with ``project``, the
    runs and model versions it names must be the project's. Raises :class:`ConfigError`."""
    found = problems(config, keys)
    if not found and project is not None:
        found = _foreign_references(config, project, keys)
    if found:
        raise ConfigError(found)
    return config


def _foreign_references(config: dict, project, keys: list[str] | None) -> dict[str, str]:
    from annotation.models import AlignmentRun, ModelVersion

    found = {}
    checked = [k for k in REFERENCES if k in config and (keys is None or k in keys)]
    for key in checked:
        value = config[key]
        if key in ("encoder", "spacy_pipeline"):  # a model: the project's own versions, never another's
            from annotation.services.projects import language_tools

            try:
                language_tools.checked(value, key, project)
            except language_tools.LanguageToolsError as exc:
                found[key] = str(exc)
            continue
        if key == "default_model_version" and value is not None:
            if not ModelVersion.objects.filter(project=project, pk=value).exists():
                found[key] = f"model version #{value} is not a model version of this project"
            continue
        if key == "queue_run":
            runs = [value]
        elif key == "queue_changes":
            runs = list((value or {}).values())
        else:
            runs = [(value or {}).get("source_run")]
        runs = [r for r in runs if r is not None]
        known = set(AlignmentRun.objects.filter(project=project, pk__in=runs).values_list("pk", flat=True))
        missing = [r for r in runs if r not in known]
        if missing:
            found[key] = f"run #{missing[0]} is not a run of this project"
    return found
