"""The one schema of ``Project.config``: every key the app reads, its type and range.

The settings page (``project_settings``, ``guidelines``, ``language_tools``) and the API
(``PATCH /api/projects/<id>/ {"config": {...}}``) both check a config through :func:`checked`: every key is declared
once in :func:`config_options` (the ``Option`` schema: type, range or choices, help), and a key's ``clean`` is the
check its own area uses when it reads the value (``qc.QcConfig.parse`` for ``qc``,
``paragraph_alignment.PARAGRAPH_SETTINGS_OPTIONS`` for the paragraph settings, the engine's option schema for
``wivico``...), so the API refuses exactly what the page refuses, and a value the API stores never
breaks a page or a run later. Unknown keys are refused with the list of valid ones.

>>> checked({"qc": {"overlap": 0}})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
annotation.services.settings.config_schema.ConfigError: qc: bad qc option(s): overlap: must be >= 1, got 0; valid: overlap ...
>>> checked({"colour": "red"})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
annotation.services.settings.config_schema.ConfigError: colour: unknown setting; valid: adjudicate, adjudicate_show_score, ...
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from annotation.errors import DomainError
from annotation.requests import Option
from annotation.validation import MAX_ID, json_problem
from workers.engine import OptionError, check_config

UNCERTAINTY_SOURCES = ("model", "disagreement")


class ConfigError(DomainError, ValueError):
    """Bad config values: ``errors`` maps each bad key to why (all of them at once)."""

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{key}: {why}" for key, why in errors.items()))


# --- What a key's type and range do not say: each returns the value or raises ValueError ---------------

def _optional_id(name: str) -> Option:
    return Option(name, "int", None, 1, MAX_ID, nullable=True, help="an id of the project's own rows")


def _qc(value: dict) -> dict:
    from annotation.services.review import qc

    qc.QcConfig.parse(value)
    return value


def _adjudication_modes() -> tuple[str, ...]:
    from annotation.services.review.adjudication import MODES

    return tuple(MODES)


def _correction_modes() -> tuple[str, ...]:
    from annotation.services.editing.paragraph_correction import CORRECTION_MODES

    return tuple(CORRECTION_MODES)


def _queue_orders() -> tuple[str, ...]:
    from annotation.services.review.queue_serving import ORDERS

    return tuple(ORDERS)


def _tool(what: str, key: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        from annotation.services.projects import language_tools, model_paths

        cleaned = language_tools.clean(value, what)
        if not cleaned.startswith(model_paths.VERSION_PREFIX):  # a version id is checked against the project
            language_tools.checked(cleaned, key, None, database=False)
        return value
    return check


def _guidelines(value: str) -> str:
    from annotation.services.projects.guidelines import MAX_LENGTH

    if len(value) > MAX_LENGTH:
        raise ValueError(f"at most {MAX_LENGTH:,} characters (got {len(value):,})")
    return value


def _paragraph_options() -> tuple[Option, ...]:
    """``paragraph_alignment``, ``candidates``, ``candidate_selection``: the paragraph settings' own declarations."""
    from annotation.services.alignment.paragraph_alignment import PARAGRAPH_SETTINGS_OPTIONS

    return PARAGRAPH_SETTINGS_OPTIONS


def _splits(value: dict) -> dict:
    from annotation.services.export.splits import validate_policy

    validate_policy(value)
    return value


def _threshold_options() -> tuple[Option, ...]:
    from annotation.services.scoring.calibration import METHODS

    return (Option("aligned", "float", help="score at or above which a pair is aligned"),
            Option("partial", "float", None, nullable=True, help="score at or above which a pair is partial"),
            Option("method", "str", choices=tuple(METHODS), help="how the cut-offs were chosen"),
            Option("pairs", "object", help="the labelled pairs they came from"),
            Option("f1", "object", help="their F1 on those pairs"),
            _optional_id("source_run"),
            Option("computed_at", "str", help="when (ISO date-time)"))


def _thresholds(value: dict) -> dict:
    """What ``calibration.calibrate`` stores: the cut-offs, the labelled pairs they came from."""
    try:
        check_config("thresholds", _threshold_options(), value)
    except OptionError as exc:
        raise ValueError("; ".join(f"{k}: {why}" for k, why in exc.problems.items())) from None
    return value


def _method_settings(method: str) -> Callable[[dict], dict]:
    """A method's stored settings (``config[<method>]``: its ``project_keys``, e.g. the cut-offs scoring's
    wivico-thresholds job derives): its own options, as a run takes them, and ``derived_from``."""

    def clean(value: dict) -> dict:
        from annotation.services.alignment.run_options import facts, method_options

        keys = facts(method).project_keys
        unknown = sorted(set(value) - {*keys, "derived_from"})
        if unknown:
            raise ValueError(f"unknown key(s) {', '.join(unknown)}; valid: {', '.join(keys)}, derived_from")
        if "derived_from" in value and not isinstance(value["derived_from"], dict):
            raise ValueError("derived_from must be an object")
        schema = [o for o in method_options(method) if o.name in keys]
        check_config(method, schema, {k: v for k, v in value.items() if k in keys})
        return value

    return clean


def _method_options() -> tuple[Option, ...]:
    """``<method>`` for each method that declares ``project_keys`` (``wivico``: the cut-offs its scoring job
    derives), read from the methods' declarations."""
    from annotation.services.alignment.run_options import available_methods, facts

    return tuple(Option(m, "object", clean=_method_settings(m), help=f"{m}'s stored settings, as a run takes them")
                 for m in available_methods() if facts(m).project_keys)


def _queue_changes(value: dict) -> dict:
    if set(value) != {"old", "new"}:
        raise ValueError("must be {\"old\": <run id>, \"new\": <run id>} or null")
    run = _optional_id("run")
    for key in ("old", "new"):
        if value[key] is None or run.problem(value[key]):
            raise ValueError(f"{key}: must be a run id, got {value[key]!r}")
    if value["old"] == value["new"]:
        raise ValueError("old and new must be two different runs")
    return value


def config_options() -> tuple[Option, ...]:
    """Every key of ``Project.config``: its type, range or choices, help, and (``clean``) what the type does not
    say. Read when asked: the choices come from the areas that own them."""
    from annotation.services.editing.paragraph_correction import CORRECTION_MODES
    from annotation.services.review.adjudication import MODES
    from annotation.services.review.queue_serving import ORDERS

    return (
        Option("show_predictions", "bool", help="annotators see the model's predictions"),
        Option("adjudicate", "str", choices=tuple(MODES), help="which pairs go to adjudication"),
        Option("adjudicate_show_score", "bool", help="adjudicators see the model's score"),
        Option("paragraph_corrections", "str", choices=tuple(CORRECTION_MODES), help="how paragraph links change"),
        Option("qc", "object", clean=_qc, help="crowd quality control (review.qc.QC_OPTIONS)"),
        Option("encoder", "str", clean=_tool("sentence encoder", "encoder"), help="the sentence encoder"),
        Option("spacy_pipeline", "str", clean=_tool("spaCy pipeline", "spacy_pipeline"), help="the spaCy pipeline"),
        Option("guidelines", "str", clean=_guidelines, help="the annotation guidelines (Markdown)"),
        Option("thresholds", "object", clean=_thresholds, help="calibrated cut-offs (scoring.calibration)"),
        _optional_id("default_model_version"),
        _optional_id("queue_run"),
        Option("queue_changes", "object", None, nullable=True, clean=_queue_changes,
               help="the queue holds only the pairs two runs disagree on: {old, new}"),
        Option("queue_identical", "bool", help="queue pairs whose sides are identical"),
        Option("queue_order", "str", choices=tuple(ORDERS), help="the order the queue serves pairs in"),
        Option("queue_uncertainty", "str", choices=UNCERTAINTY_SOURCES, help="what 'uncertain' means"),
        *_paragraph_options(),
        Option("splits", "object", clean=_splits, help="the split policy (export.splits)"),
        *_method_options(),
    )


#: keys that name another object of the project (checked against the database when a project is given)
REFERENCES = ("default_model_version", "queue_run", "queue_changes", "thresholds", "encoder", "spacy_pipeline")


def problems(config: Any, keys: list[str] | None = None) -> dict[str, str]:
    """``{key: why}`` for every bad key of ``config`` (only ``keys`` when given), unknown keys included."""
    schema = config_options()
    valid = ", ".join(sorted(o.name for o in schema))
    if not isinstance(config, dict):
        return {"config": f"must be a JSON object of settings; valid keys: {valid}"}
    problem = json_problem(config)
    if problem:
        return {"config": problem}
    given = {key: config[key] for key in (sorted(config) if keys is None else keys) if key in config}
    nulls = {o.name for o in schema if o.name in given and given[o.name] is None and not o.nullable}
    found: dict[str, str] = {key: "must not be null" for key in nulls}
    try:
        check_config("project config", schema, {k: v for k, v in given.items() if k not in nulls})
    except OptionError as exc:
        found.update({key: f"unknown setting; valid: {valid}" if why == "unknown option" else why
                      for key, why in exc.problems.items()})
    return found


def checked(config: Any, *, keys: list[str] | None = None, project=None) -> dict:
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
