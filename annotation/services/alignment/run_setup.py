"""A run's setup, the same for every way of running it: the engine config (the method's project
defaults, calibrated thresholds, then the run's own params), the encoder, the aligner (loaded once
per process for the same config), the ACCESS scorer, and whether the run is shared by workers.

Every executor reads the run's setup here, so a run reports the encoder and parameters it really
used whether it ran in one process or in chunks on many workers."""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from annotation.models import MINING_METHOD, AlignmentRun, Project
from annotation.services.alignment import run_options
from annotation.services.projects.language_tools import BUNDLED_ENCODER, project_encoder, project_pipeline
from workers.engine import AlignedPair, ArticlePair, is_run_level, method_defaults


def project_method_defaults(project: Project, method: str, params: dict) -> dict:
    """The project-level defaults of ``method``: the settings a job stored in ``project.config[method]``
    (the method's ``project_keys``, e.g. the thresholds ``wivico-thresholds`` derives) unless its params set any."""
    keys = run_options.facts(method).project_keys
    stored = (project.config or {}).get(method)
    if not keys or not isinstance(stored, dict) or any(k in params for k in keys):
        return {}
    return {k: stored[k] for k in keys if k in stored}


def calibrated_defaults(project: Project, method: str, params: dict) -> dict:
    """Thresholds calibrated on human labels of an earlier run *of the same method* (scores of
    different methods are not comparable), unless the run's own params set them; the method's
    ``calibrated_options`` say which option each calibrated class sets."""
    stored = (project.config or {}).get("thresholds")
    facts = run_options.facts(method)
    options = facts.calibrated_options
    if not isinstance(stored, dict) or not options or any(o in params for o in options.values()):
        return {}
    source = (AlignmentRun.objects.filter(pk=stored.get("source_run"), project=project)
              .values_list("method", flat=True).first())
    if source != method:
        return {}
    values = {option: float(stored[key]) for key, option in options.items() if stored.get(key) is not None}
    aligned, partial = options.get("aligned"), options.get("partial")
    if facts.calibrated_partial_capped and aligned in values and partial and partial not in values:
        # no partial labels to calibrate on: keep the method's own cut-off, never above the new one
        values[partial] = min(method_defaults(method)[partial], values[aligned])
    return values


def defaults_of(run: AlignmentRun) -> dict:
    """The options the project gives a run of its method (stored, then calibrated), unless its params set them."""
    return {**project_method_defaults(run.project, run.method, run.params),
            **calibrated_defaults(run.project, run.method, run.params)}


def encoder_of(run: AlignmentRun) -> str | None:
    """The encoder (a path or name) the run's method loads: its model version, else the project's
    (or the server's ``DEFAULT_ENCODER``); None is the bundled MiniLM."""
    return run.model_version.path if run.model_version else project_encoder(run.project)


def is_shared(run: AlignmentRun) -> bool:
    """Whether the run's document pairs are cut into many chunks that any workers share. Not for a
    run-level method (WIVICO: one chunk, after a first pass over every document pair) nor for
    mining (a staged plan of its own chunks, :mod:`.mining`); decided from the method's name, no aligner or model is loaded.

    Raises:
        ValueError: an unknown method.
    """
    return run.method != MINING_METHOD and not is_run_level(run.method)


def access_scorer(run: AlignmentRun) -> AccessScorer | None:
    """The run's ACCESS scorer, or None when the run switched the attributes off."""
    if not run.params.get("access_attributes", True):
        return None
    return AccessScorer(run.project.language, project_pipeline(run.project))


def language_tools(run: AlignmentRun) -> dict:
    """The encoder and spaCy pipeline the run used, as its result records them."""
    access = run.params.get("access_attributes", True)
    return {"encoder": encoder_of(run) or BUNDLED_ENCODER,
            "spacy_pipeline": project_pipeline(run.project) if access else None}


@dataclass(frozen=True)
class Setup:
    """What every chunk of a run aligns with."""

    aligner: object
    defaults: dict
    encoder: str | None


_loaded: dict[str, Setup] = {}


def load(run: AlignmentRun) -> Setup:
    """The run's aligner (with its defaults and encoder), loaded once per process and run (its
    chunks share it; the next run, like a run in one process, starts from a fresh aligner)."""
    from workers.engine import get_aligner

    defaults = defaults_of(run)
    config = {**defaults, **run_options.engine_params(run.method, run.params)}
    encoder = encoder_of(run)
    key = json.dumps([run.pk, run.method, config, encoder], sort_keys=True, default=str)
    if key not in _loaded:
        _loaded.clear()  # one run's models at a time: a worker's memory stays bounded
        _loaded[key] = Setup(get_aligner(run.method, config, encoder), defaults, encoder)
    return _loaded[key]


class AccessScorer:
    """The ACCESS control attributes (MUSS §3.2 / SPEC §5.7) of every pair a run writes, stored in
    the pair's features as ``access_*``, so they are there for filters and exports without a job."""

    def __init__(self, language: str, pipeline: str | None = None) -> None:
        """``pipeline``: the project's spaCy pipeline (name or path), default the language's."""
        from workers.engine import load_parser

        self.language = language
        self.pipeline = pipeline
        self.nlp, self.parser_note = load_parser(language, pipeline)
        self.skipped: dict[str, str] = {}

    def for_pair(self, article_pair: ArticlePair) -> Callable[[AlignedPair], dict[str, float]]:
        complex_sents, simple_sents = article_pair.complex.sentences, article_pair.simple.sentences

        def attributes(p: AlignedPair) -> dict[str, float]:
            from workers.engine import access_attributes

            attrs, missing = access_attributes(" ".join(complex_sents[i] for i in p.complex),
                                               " ".join(simple_sents[i] for i in p.simple), self.language, parser=self.nlp)
            # without a pipeline, say why it could not be loaded (not access_attributes' "no parser requested")
            self.skipped.update({f"access_{k}": why if self.nlp is not None else f"no dependency parser ({self.parser_note})"
                                 for k, why in missing.items()})
            return {f"access_{k}": v for k, v in attrs.items()}

        return attributes
