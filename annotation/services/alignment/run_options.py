"""What a run may be given: the methods, each method's options (the engine's schema), the app's own
options and the model versions a method can use. Checked once, before a run is queued, so a bad
parameter is a 400 (or a form message) listing the valid options, never a failed run in a worker.

:data:`APP_OPTIONS` is the one list of the params the application reads itself; everything else in
a run's params goes to the engine method (:func:`engine_params`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from annotation.errors import DomainError
from annotation.models import MINING_METHOD, ModelVersion, Project
from annotation.requests import BadOptions
from workers.engine import MethodFacts, Option, OptionError, check_config, describe
from workers.engine import available_methods as engine_methods

if TYPE_CHECKING:
    from workers.engine import MiningConfig


class RunOptionsError(BadOptions):
    """A run's bad options, each under its name (``problems``, code ``invalid``, as every command's options), mining's
    included; the body keeps ``params`` (the same problems) and ``valid_options``, which the run form shows."""

    def __init__(self, message: str, problems: dict[str, str], valid: list[str]) -> None:
        super().__init__(message, problems)
        self.valid = list(valid)

    @classmethod
    def of(cls, exc: OptionError) -> RunOptionsError:
        return cls(str(exc), exc.problems, exc.valid)

    def payload(self) -> dict:
        return {**super().payload(), "params": dict(self.problems), "valid_options": list(self.valid)}


class ModelVersionRefused(DomainError, ValueError):
    """A model version a run cannot use: another project's, or of a kind the method does not load."""

    code = "bad_model_version"


@dataclass(frozen=True)
class _ArticleIds(Option):
    """A list option whose items must be article ids (integers)."""

    def problem(self, value: Any) -> str | None:
        why = super().problem(value)
        if why is None and value and not all(isinstance(a, int) and not isinstance(a, bool) for a in value):
            return f"must be a list of article ids, got {value!r}"
        return why


APP_OPTIONS: tuple[Option, ...] = (
    Option("access_attributes", "bool", True, help="score ACCESS attributes of every pair"),
    _ArticleIds("skip_articles", "list", [], help="ids of articles to leave out"),
)
"""Run params the app handles itself (not passed to the engine)."""

MINING_APP_OPTIONS: tuple[Option, ...] = (
    Option("keep_files", "bool", False, help="keep a mining run's embeddings and index after it"),
)
"""The app's params that only a mining run (``muss-corpus``) reads, besides :data:`APP_OPTIONS`."""

MINING_FACTS = MethodFacts(model_kinds=("bi-encoder",))
"""What a mining run (``muss-corpus``, not an engine method) is, besides its options: it embeds with a bi-encoder."""

MODEL_KIND = "crf"
"""The kind of version a training job saves, and the one a crf run uses by default once promoted."""

MODEL_PATH_REFUSED = ("a model is chosen from the project's model versions (model_version), never a path; "
                      "promote or train a version on the models page")


def available_methods() -> list[str]:
    """The engine's aligners, and ``muss-corpus``: mining across every document of the project
    (:mod:`annotation.services.alignment.mining`)."""
    return [*engine_methods(), MINING_METHOD]


def facts(method: str) -> MethodFacts:
    """What the app reads about ``method`` besides its options (its model kinds, calibrated options, project
    keys): the engine method's own declaration (:func:`workers.engine.method_facts`)."""
    from workers.engine import method_facts

    return MINING_FACTS if method == MINING_METHOD else method_facts(method)


def app_options(method: str) -> tuple[Option, ...]:
    """The app's own options of a run of ``method``."""
    return (*APP_OPTIONS, *MINING_APP_OPTIONS) if method == MINING_METHOD else APP_OPTIONS


def engine_params(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The params of a run of ``method`` that go to the engine (all but the app's own options)."""
    app = {o.name for o in app_options(method)}
    return {k: v for k, v in (params or {}).items() if k not in app}


@dataclass(frozen=True)
class MiningRequest:
    """A mining run's params parsed once, the object the mining service takes: the engine's mining
    options (:class:`~workers.engine.MiningConfig`, declared by :data:`~workers.engine.MINING_PARAMS`) and
    the app's own (:data:`APP_OPTIONS`, :data:`MINING_APP_OPTIONS`)."""

    config: MiningConfig
    access_attributes: bool = True
    keep_files: bool = False

    @classmethod
    def parse(cls, params: dict[str, Any]) -> MiningRequest:
        """Parse a mining run's params (when the run is started, and from the stored run in its worker).

        Raises:
            RunOptionsError: every unknown or bad option, engine's and app's (a 400 naming each, listing the valid ones).
        """
        from workers.engine import MINING_PARAMS, MiningConfig  # the miner's modules load on a mining run only

        engine = engine_params(MINING_METHOD, params)
        app = {k: v for k, v in (params or {}).items() if k not in engine}
        schema = app_options(MINING_METHOD)
        problems: dict[str, str] = {}  # the engine's and the app's options checked alike: every bad one at once
        try:
            check_config(MINING_METHOD, schema, app)
        except OptionError as exc:
            problems.update(exc.problems)
        what = MINING_METHOD
        try:
            config = MiningConfig.from_dict(engine)
        except OptionError as exc:
            problems.update(exc.problems)
            what = exc.method  # the miner's own name for its options ("bad mine option(s)"), as it always said
        if problems:
            raise RunOptionsError.of(OptionError(what, problems, (*MINING_PARAMS, *schema)))
        values = {**{o.name: o.default for o in schema}, **app}
        return cls(config, access_attributes=bool(values["access_attributes"]), keep_files=bool(values["keep_files"]))


def method_options(method: str) -> tuple[Option, ...]:
    """The engine options of ``method`` (``muss-corpus``: the miner's, :data:`~workers.engine.MINING_PARAMS`)."""
    from workers.engine import MINING_PARAMS, method_schema

    if method == MINING_METHOD:
        return MINING_PARAMS
    return method_schema(method)


def schemas(project: Project | None = None) -> list[dict[str, Any]]:
    """Every method with its options and the model kinds it accepts (``GET /api/methods/``)."""
    return [{"name": m, "options": describe(method_options(m)), "app_options": describe(APP_OPTIONS),
             "model_kinds": list(facts(m).model_kinds)} for m in available_methods()]


def model_versions(project: Project, method: str | None = None):
    """The project's versions a run of ``method`` may choose (all the project's versions when None)."""
    qs = ModelVersion.objects.filter(project=project).order_by("-created_at")
    return qs if method is None else qs.filter(kind__in=facts(method).model_kinds)


def default_version(project: Project) -> ModelVersion | None:
    """The trained version the project aligns with by default (promoted by a researcher), if any."""
    pk = (project.config or {}).get("default_model_version")
    return ModelVersion.objects.filter(project=project, kind=MODEL_KIND, pk=pk).first() if pk else None


def check(project: Project, method: str, params: dict[str, Any], model_version: ModelVersion | None) -> None:
    """Refuse a model path, unknown or bad options and a model version of another project or kind.

    Raises:
        RunOptionsError: a bad option, each under its name (the message lists the valid options and their ranges).
        ModelVersionRefused: an unusable model version.
    """
    app = app_options(method)
    if "model" in params:
        raise RunOptionsError.of(OptionError(method, {"model": MODEL_PATH_REFUSED}, (*method_options(method), *app)))
    engine = engine_params(method, params)
    if method == MINING_METHOD:
        MiningRequest.parse(params)
    else:
        schema = method_options(method)
        try:
            check_config(method, (*schema, *app), params)
        except OptionError as exc:
            raise RunOptionsError.of(exc) from None
        paths = [o.name for o in schema if o.type == "path" and engine.get(o.name)]
        if paths:
            raise RunOptionsError.of(OptionError(
                method, {k: "a file path on the worker is not accepted from the app" for k in paths}, (*schema, *app)))
    if model_version is not None:
        if model_version.project_id != project.pk:
            raise ModelVersionRefused("model_version: not a model version of this project")
        kinds = facts(method).model_kinds
        if model_version.kind not in kinds:
            raise ModelVersionRefused(f"model_version: {model_version.name!r} is a {model_version.kind} model; "
                                      + (f"{method} runs use {', '.join(kinds)} models" if kinds
                                         else f"{method} runs use no model"))
