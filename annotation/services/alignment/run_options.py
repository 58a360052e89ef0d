"""What a run may be given: each method's options (the engine's schema), the app's own params and
the model versions a method can use. Checked before a run is queued, so a bad parameter is a 400
(or a form message) listing the valid options, never a failed run in a worker."""
from __future__ import annotations

from typing import Any

from annotation.models import MINING_METHOD, ModelVersion, Project
from workers.engine import Option, OptionError, check_config, describe

APP_OPTIONS: tuple[Option, ...] = (
    Option("access_attributes", "bool", True, help="score ACCESS attributes of every pair"),
    Option("skip_articles", "list", [], help="ids of articles to leave out"),
)
"""Run params the app handles itself (not passed to the engine)."""

MODEL_KINDS: dict[str, tuple[str, ...]] = {
    "crf": ("crf", "cross-encoder", "bi-encoder"),
    **{m: ("bi-encoder",) for m in ("sbert", "muss", "wivico", "sum4simp", "muss-corpus")},
}
"""Which kinds of the project's model versions a method can load (none: it uses no model)."""

MODEL_KIND = "crf"
"""The kind of version a training job saves, and the one a crf run uses by default once promoted."""

MODEL_PATH_REFUSED = ("a model is chosen from the project's model versions (model_version), never a path; "
                      "promote or train a version on the models page")


def method_options(method: str) -> tuple[Option, ...]:
    """The engine options of ``method`` (``muss-corpus``: the miner's, :data:`~workers.engine.MINING_PARAMS`)."""
    from workers.engine import MINING_PARAMS, method_schema

    if method == MINING_METHOD:
        return MINING_PARAMS
    return method_schema(method)


def schemas(project: Project | None = None) -> list[dict[str, Any]]:
    """Every method with its options and the model kinds it accepts (``GET /api/methods/``)."""
    from annotation.services.alignment.alignment_runs import available_methods

    return [{"name": m, "options": describe(method_options(m)), "app_options": describe(APP_OPTIONS),
             "model_kinds": list(MODEL_KINDS.get(m, ()))} for m in available_methods()]


def model_versions(project: Project, method: str | None = None):
    """The project's versions a run of ``method`` may choose (all the project's versions when None)."""
    qs = ModelVersion.objects.filter(project=project).order_by("-created_at")
    return qs if method is None else qs.filter(kind__in=MODEL_KINDS.get(method, ()))


def default_version(project: Project) -> ModelVersion | None:
    """The trained version the project aligns with by default (promoted by a researcher), if any."""
    pk = (project.config or {}).get("default_model_version")
    return ModelVersion.objects.filter(project=project, kind=MODEL_KIND, pk=pk).first() if pk else None


def check(project: Project, method: str, params: dict[str, Any], model_version: ModelVersion | None) -> None:
    """Refuse a model path, unknown or bad options and a model version of another project or kind.

    Raises:
        OptionError: a bad option (the message lists the valid options and their ranges).
        ValueError: a model path or an unusable model version.
    """
    from annotation.services.alignment.mining import check_params

    if "model" in params:
        raise OptionError(method, {"model": MODEL_PATH_REFUSED}, (*method_options(method), *APP_OPTIONS))
    app = {k: v for k, v in params.items() if k in {o.name for o in APP_OPTIONS}}
    engine = {k: v for k, v in params.items() if k not in app}
    if method == MINING_METHOD:
        check_params(engine)
    else:
        schema = method_options(method)
        check_config(method, (*schema, *APP_OPTIONS), params)
        paths = [o.name for o in schema if o.type == "path" and engine.get(o.name)]
        if paths:
            raise OptionError(method, {k: "a file path on the worker is not accepted from the app" for k in paths},
                              (*schema, *APP_OPTIONS))
    check_config(method, APP_OPTIONS, app)
    if model_version is not None:
        if model_version.project_id != project.pk:
            raise ValueError("model_version: not a model version of this project")
        kinds = MODEL_KINDS.get(method, ())
        if model_version.kind not in kinds:
            raise ValueError(f"model_version: {model_version.name!r} is a {model_version.kind} model; "
                             + (f"{method} runs use {', '.join(kinds)} models" if kinds
                                else f"{method} runs use no model"))
