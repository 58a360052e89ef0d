"""Scoring jobs: the seed papers' filters and attributes over a project's candidate pairs (SPEC §5.4–5.7).

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
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

from django.conf import settings
from django.db import transaction

from annotation.models import (
    AlignmentRun,
    CandidatePair,
    Job,
    ModelVersion,
    Prediction,
    Project,
)
from annotation.services.background import progress
from annotation.services.corpus.documents import engine_pair, pair_sentences, pair_texts
from annotation.services.corpus.language_tools import project_encoder, project_pipeline
from annotation.services.projects.creation import find_project
from workers.engine.text import normalise

ProgressFn = Callable[[float, str], None]

KINDS: tuple[str, ...] = ("access-attributes", "sum4simp-filter", "wivico-thresholds", "gain-classifier", "pivot-select")
PREFIXES = {"access-attributes": "access_", "sum4simp-filter": "sum4simp_", "gain-classifier": "gain_",
            "pivot-select": "pivot_"}
BATCH = 500
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
    _number(params, "threshold", float, 0.0, 1.0)
    _number(params, "epochs", int, 1, 1000)
    _number(params, "seed", int)
    _number(params, "h_bleu", float, 0.0, 100.0)
    _number(params, "h_fres", float, -200.0, 200.0)
    _number(params, "max_document_pairs", int, 1, None)
    if "orient" in params and not isinstance(params["orient"], bool):
        raise ValueError("orient must be true or false")
    if kind == "pivot-select":
        from workers.engine.simplicity import FRES_COEFFICIENTS

        if project.language not in FRES_COEFFICIENTS:
            raise ValueError(f"no FRES coefficients for the project's language {project.language!r}; "
                             f"supported: {', '.join(sorted(FRES_COEFFICIENTS))}")
    if kind == "wivico-thresholds" and params.get("run") is not None:
        method = project.runs.get(pk=params["run"]).method
        if method != "wivico":
            raise ValueError(f"run {params['run']} is a {method} run; WIVICO's cut-offs are learnt from a wivico run's "
                             "annotated 1:1 pairs")
    if kind == "wivico-thresholds" and "propagation" in params:
        from workers.engine.simplicity.wivico_thresholds import PROPAGATION_METHODS

        if params["propagation"] not in PROPAGATION_METHODS:
            raise ValueError(f"unknown propagation {params['propagation']!r}; choose one of: {', '.join(PROPAGATION_METHODS)}")
    return params


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
        job = Job.objects.select_related("project__label_scheme").get(pk=job_id)
        result = RUNNERS[job.kind](job, report)
    except Exception as exc:  # noqa: BLE001 - stored on the job (errors as data), then re-raised for the log
        progress.fail(Job, job_id, exc)
        raise
    progress.succeed(Job, job_id, result=result, timings={"total_s": round(time.monotonic() - started, 3)})


def target_pairs(project: Project, params: dict):
    """The pairs a job scores: the project's, or one run's, optionally of one origin."""
    qs = CandidatePair.objects.filter(article__project=project)
    if params.get("run") is not None:
        qs = qs.filter(pk__in=Prediction.objects.filter(run_id=params["run"]).values("pair_id"))
    if params.get("origin"):
        qs = qs.filter(origin=params["origin"])
    return qs


def _batches(ids: list[int], size: int = BATCH) -> Iterator[list[int]]:
    for start in range(0, len(ids), size):
        yield ids[start:start + size]


def write_features(updates: dict[int, dict[str, float]], prefix: str) -> None:
    """Replace the ``prefix`` keys of each pair's features with ``updates[pair]`` (row-locked batch)."""
    with transaction.atomic():
        pairs = list(CandidatePair.objects.select_for_update().filter(pk__in=list(updates)).only("id", "features"))
        for pair in pairs:
            kept = {k: v for k, v in (pair.features or {}).items() if not k.startswith(prefix)}
            pair.features = {**kept, **{k: float(v) for k, v in updates[pair.pk].items()}}
        CandidatePair.objects.bulk_update(pairs, ["features"])


def score_each(job: Job, report: ProgressFn, score: Callable[[list], list[dict[str, float]]],
               prefix: str, *, sentences: bool = False) -> int:
    """Score the job's target pairs batch by batch with ``score(texts) -> features`` (``texts``: a
    (complex, simple) text per pair, or with ``sentences`` their sentence lists); returns the count."""
    ids = list(target_pairs(job.project, job.params).order_by("id").values_list("id", flat=True))
    done = 0
    for batch in _batches(ids):
        texts = pair_sentences(batch) if sentences else pair_texts(batch)
        present = [pid for pid in batch if pid in texts]
        rows = score([texts[pid] for pid in present])
        write_features(dict(zip(present, rows)), prefix)
        done += len(batch)
        report(0.1 + 0.9 * done / max(1, len(ids)), f"{job.kind}: scored {done}/{len(ids)} pairs")
    return len(ids)


def reference_texts(project_id: int) -> list[tuple[str, str]]:
    """(complex, simple) texts of a reference project's imported pairs, in id order."""
    ids = list(CandidatePair.objects.filter(article__project_id=project_id, origin="import").order_by("id")
               .values_list("id", flat=True))
    out: list[tuple[str, str]] = []
    for batch in _batches(ids, 2000):
        texts = pair_texts(batch)
        out += [texts[pid] for pid in batch if pid in texts]
    return out


def _reference_key(text: str) -> str:
    """How a complex text is matched with its reference simplifications (punctuation counts)."""
    return normalise(text, keep_punctuation=True)


def reference_simplifications(project_id: int | None) -> dict[str, list[str]]:
    """``{normalised complex text: [reference simplifications]}`` from an imported pair corpus."""
    refs: dict[str, list[str]] = defaultdict(list)
    if project_id is not None:
        for complex_text, simple_text in reference_texts(project_id):
            refs[_reference_key(complex_text)].append(simple_text)
    return refs


def _model_dir(kind: str, job: Job) -> Path:
    folder = Path(settings.MODEL_ROOT) / kind
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"project-{job.project_id}-job-{job.pk}"


def _save_model_version(job: Job, kind: str, path: Path, snapshot: dict, metrics: dict) -> ModelVersion:
    mv, _ = ModelVersion.objects.update_or_create(
        project=job.project, name=f"{kind} (job #{job.pk})",
        defaults={"kind": kind, "path": str(path), "training_snapshot": snapshot, "metrics": metrics},
    )
    return mv


# --- the five kinds ------------------------------------------------------------------------------

def access_job(job: Job, report: ProgressFn) -> dict:
    from workers.engine.simplicity.access import access_attributes
    from workers.engine.simplicity.parsing import load_parser

    language = job.project.language
    parser = job.params.get("parser", "auto")
    nlp, why = (None, "no parser requested") if parser in (None, "", "none") else load_parser(
        language, project_pipeline(job.project) if parser == "auto" else parser)
    skipped: dict[str, str] = {}

    def score(texts):
        rows = []
        for complex_text, simple_text in texts:
            attrs, missing = access_attributes(complex_text, simple_text, language, parser=nlp)
            skipped.update({f"access_{k}": reason if nlp is not None else f"no dependency parser ({why})"
                            for k, reason in missing.items()})
            rows.append({f"access_{k}": v for k, v in attrs.items()})
        return rows

    report(0.05, "access-attributes: parser " + ("loaded" if nlp is not None else "unavailable"))
    n = score_each(job, report, score, PREFIXES[job.kind])
    return {"pairs": n, "language": language, "parser": why, "skipped": skipped, "missing_features": skipped,
            "keys": [k for k in ("access_char_ratio", "access_lev_sim", "access_word_rank_ratio",
                                 "access_dep_depth_ratio") if k not in skipped]}


def sum4simp_job(job: Job, report: ProgressFn) -> dict:
    from workers.engine.simplicity.pairs import TextPair
    from workers.engine.simplicity.sum4simp_filter import DEFAULT_THRESHOLD, Sum4SimpFilter

    params, language = job.params, job.project.language
    refs = reference_simplifications(params.get("refs_project"))
    if params.get("model_version"):
        mv = ModelVersion.objects.get(pk=params["model_version"])
        flt = Sum4SimpFilter.load(mv.path)
        if "threshold" in params:
            flt.threshold = float(params["threshold"])
    else:
        report(0.02, "sum4simp-filter: loading the reference corpus")
        reference = [TextPair(c, s, tuple(refs.get(_reference_key(c), ()))) for c, s in reference_texts(params["reference_project"])]
        flt = Sum4SimpFilter.fit(reference, language=language, threshold=float(params.get("threshold", DEFAULT_THRESHOLD)))
        path = _model_dir("sum4simp-filter", job).with_suffix(".json")
        flt.save(path)
        mv = _save_model_version(
            job, "sum4simp-filter", path,
            {"reference_project": params["reference_project"], "refs_project": params.get("refs_project"),
             "pairs": len(reference), "pairs_with_refs": sum(1 for p in reference if p.refs), "language": language},
            {"fits": {k: {"mu": v.mu, "sigma": v.sigma, "n": v.n} for k, v in flt.fits.items()},
             "threshold": flt.threshold},
        )
    kept = 0

    def score(sentences):
        nonlocal kept
        rows = []
        for complex_sentences, simple_sentences in sentences:
            # an n:1 pair's source is its stitched sentences: §3.2's length uses their average length
            complex_text = " ".join(complex_sentences)
            references = refs.get(_reference_key(complex_text), ())
            values = flt.score_pair(complex_sentences, " ".join(simple_sentences), references)
            keep = values.pop("keep")
            kept += int(keep)
            rows.append({**{f"sum4simp_{k}": v for k, v in values.items()}, "sum4simp_keep": keep})
        return rows

    n = score_each(job, report, score, PREFIXES[job.kind], sentences=True)
    return {"pairs": n, "kept": kept, "keep_rate": round(kept / n, 4) if n else 0.0, "model_version": mv.pk,
            "threshold": flt.threshold, "attributes": sorted(flt.fits),
            "sari": "used" if "sari" in flt.fits else "left out: no reference simplifications (refs_project)",
            "missing_features": {} if "sari" in flt.fits else {
                "sum4simp_sari": "no reference simplifications (refs_project); T rescaled over the other attributes"}}


def annotated_classes(project: Project, pairs) -> dict[int, str]:
    """``{pair id: aligned|partial|not}`` of annotated pairs: the stored gold when there is one,
    else the strict majority of the counted labels (ties count as not annotated); a value without a
    class leaves the pair out."""
    from annotation.services.review.gold import pair_classes

    return pair_classes(project, pairs, default=None)


WIVICO_RUN_KEYS = ("max_n", "max_m", "max_tokens")  # a source run's window settings the window means reuse


def wivico_source_run(project: Project, params: dict) -> AlignmentRun:
    """The wivico run whose annotated 1:1 pairs give WIVICO's 1:1 cut-off: ``params["run"]`` (it must
    be a wivico run), else the newest wivico run with an annotated 1:1 pair that counts as valid.

    Raises:
        ValueError: the given run is not a wivico run, or no wivico run has such a pair.
    """
    if params.get("run") is not None:
        run = AlignmentRun.objects.get(pk=params["run"], project=project)
        if run.method != "wivico":
            raise ValueError(f"run #{run.pk} is a {run.method} run: WIVICO's 1:1 cut-off is the mean SBERT score of "
                             "valid pairs of a wivico run (its scores are on that scale); choose a wivico run")
        return run
    for run in project.runs.filter(method="wivico").order_by("-created_at", "-pk"):
        chosen, classes = _wivico_one_to_one(project, run, params)
        if any(classes[p.pk] == "aligned" for p in chosen):
            return run
    raise ValueError("no annotated 1:1 pair of a wivico run counts as valid (aligned) in this project; run wivico, "
                     "then label or adjudicate some of its 1:1 pairs first")


def _wivico_one_to_one(project: Project, run: AlignmentRun, params: dict) -> tuple[list[CandidatePair], dict[int, str]]:
    """The run's predicted W1:V1 pairs annotated valid or partially valid, and their classes."""
    pairs = target_pairs(project, {**params, "run": run.pk}).exclude(complex_key__contains=",").exclude(
        simple_key__contains=",")
    classes = annotated_classes(project, pairs)
    chosen = [p for p in pairs.filter(pk__in=list(classes)).only("id", "complex_key", "simple_key")
              if classes[p.pk] in ("aligned", "partial")]
    return chosen, classes


def wivico_job(job: Job, report: ProgressFn) -> dict:
    """WIVICO §3.2.2: 1:1 cut-off = mean SBERT score of a wivico run's valid W1:V1 pairs; the other
    configurations' cut-offs by the decreasing shift over the window means of **every** document pair
    the run aligned (Figure 3: all samples of the corpus); all of them stored for later runs."""
    import numpy as np

    from annotation.services.alignment.alignment_runs import document_pairs
    from workers.engine.methods.wivico import WivicoAligner
    from workers.engine.simplicity.embedding import default_encoder
    from workers.engine.simplicity.wivico_thresholds import calibrate_label_thresholds

    project, params = job.project, job.params
    run = wivico_source_run(project, params)
    one_to_one, classes = _wivico_one_to_one(project, run, params)
    if not any(classes[p.pk] == "aligned" for p in one_to_one):
        raise ValueError(f"no annotated 1:1 pair of wivico run #{run.pk} counts as valid (aligned); label or "
                         "adjudicate some of its 1:1 pairs first")
    texts = pair_texts([p.pk for p in one_to_one])
    one_to_one = [p for p in one_to_one if p.pk in texts]
    model = params.get("model") or run.params.get("model") or project_encoder(project)
    encoder = default_encoder(model)
    report(0.05, f"wivico-thresholds: encoding {len(one_to_one)} annotated 1:1 pairs of run #{run.pk}")
    complex_vec = encoder.encode([texts[p.pk][0] for p in one_to_one])
    simple_vec = encoder.encode([texts[p.pk][1] for p in one_to_one])
    cosines = np.sum(np.asarray(complex_vec) * np.asarray(simple_vec), axis=1).astype(float).tolist()
    labels = [classes[p.pk] for p in one_to_one]
    cut = calibrate_label_thresholds(cosines, labels)
    threshold = cut["valid"]
    partial = cut.get("partial", threshold - 0.15)

    propagation = params.get("propagation", "paper")
    limit = params.get("max_document_pairs")  # None: every document pair of the run (the paper's corpus)
    skip = set(run.params.get("skip_articles") or ())
    work = [(c, s) for a in project.articles.order_by("id") if a.pk not in skip
            for c, s in document_pairs(a, run.level_pairs)]
    if limit is not None:
        work = work[:int(limit)]
    window_settings = {k: run.params[k] for k in WIVICO_RUN_KEYS if k in run.params}
    aligner = WivicoAligner({"threshold": threshold, "partial_threshold": partial, "propagation": propagation,
                             **window_settings}, model=model, encoder=encoder)
    means = aligner.prepare((engine_pair(c, s) for c, s in work), total=len(work),
                            progress=lambda f, m: report(0.1 + 0.85 * f, f"wivico-thresholds: {m}"))
    thresholds = means["thresholds"] or {"1:1": threshold}
    partial_thresholds = means["partial_thresholds"] or {"1:1": partial}
    derived = {"job": job.pk, "source_run": run.pk, "valid_pairs": labels.count("aligned"),
               "partial_pairs": labels.count("partial"), "document_pairs": len(work),
               "capped": limit is not None, "config_means": means["config_means"], "windows": means["windows"],
               "model": model or "default"}
    stored = {"threshold": threshold, "partial_threshold": partial, "thresholds": thresholds,
              "partial_thresholds": partial_thresholds, "propagation": propagation, "derived_from": derived}
    with transaction.atomic():
        locked = Project.objects.select_for_update().get(pk=project.pk)
        locked.config = {**(locked.config or {}), "wivico": stored}
        locked.save(update_fields=["config"])
    return stored


def gain_job(job: Job, report: ProgressFn) -> dict:
    from workers.engine.simplicity.gain_classifier import GainClassifier, cutoff_counts
    from workers.engine.simplicity.gain_features import GainFeaturizer

    params, language = job.params, job.project.language
    parser = params.get("parser", "auto")
    if parser == "auto":
        parser = project_pipeline(job.project) or "auto"  # the project's spaCy pipeline, name or path
    featurizer = GainFeaturizer(language, parser=None if parser in (None, "", "none") else parser)
    if params.get("model_version"):
        mv = ModelVersion.objects.get(pk=params["model_version"])
        clf = GainClassifier.load(mv.path, featurizer)
    else:
        report(0.02, "gain-classifier: loading the reference corpus")
        reference = reference_texts(params["reference_project"])
        report(0.05, f"gain-classifier: training on {len(reference)} reference pairs and their swaps")
        clf = GainClassifier.train(reference, featurizer=featurizer, language=language,
                                   epochs=int(params.get("epochs", 50)), seed=int(params.get("seed", 0)))
        path = _model_dir("gain-classifier", job)
        clf.save(path)
        mv = _save_model_version(
            job, "gain-classifier", path,
            {"reference_project": params["reference_project"], "pairs": len(reference), "language": language,
             "features": list(clf.feature_names), "skipped_features": clf.skipped},
            clf.metrics,
        )
    def score(texts):
        values = clf.predict_proba(texts).tolist() if texts else []
        return [{"gain_prob": p} for p in values]

    n = score_each(job, report, score, PREFIXES[job.kind])
    probs, shapes = [], []
    for c, s, features in target_pairs(job.project, params).values_list("complex_key", "simple_key", "features"):
        if "gain_prob" in (features or {}):
            probs.append(features["gain_prob"])
            shapes.append(f"{c.count(',') + 1}:{s.count(',') + 1}")
    counts = cutoff_counts(probs, shapes)
    return {"pairs": n, "model_version": mv.pk, "features": list(clf.feature_names), "metrics": clf.metrics,
            "cutoff_counts": counts, "parser": featurizer.parser_info,
            "missing_features": {f"gain_classifier:{k}": why for k, why in sorted(clf.skipped.items())}}


def pivot_job(job: Job, report: ProgressFn) -> dict:
    from workers.engine.simplicity.pivot import H_BLEU, H_FRES, pivot_select

    params, language = job.params, job.project.language
    h_bleu, h_fres = float(params.get("h_bleu", H_BLEU)), float(params.get("h_fres", H_FRES))
    orient = bool(params.get("orient", True))
    counts = {"kept": 0, "identical": 0, "low_bleu": 0, "low_fres_gain": 0}

    def score(texts):
        rows = []
        for complex_text, simple_text in texts:
            d = pivot_select(complex_text, simple_text, language=language, h_bleu=h_bleu, h_fres=h_fres, orient=orient)
            counts[d.reason] += 1
            rows.append({"pivot_bleu": d.bleu, "pivot_fres_complex": d.fres_complex, "pivot_fres_simple": d.fres_simple,
                         "pivot_fres_gain": d.fres_gain, "pivot_swapped": float(d.swapped), "pivot_keep": float(d.keep)})
        return rows

    n = score_each(job, report, score, PREFIXES[job.kind])
    return {"pairs": n, "h_bleu": h_bleu, "h_fres": h_fres, "orient": orient, "language": language,
            "counts": counts, "dropped": n - counts["kept"], "pass_rate": round(counts["kept"] / n, 4) if n else 0.0}


RUNNERS: dict[str, Callable[[Job, ProgressFn], dict]] = {
    "access-attributes": access_job,
    "sum4simp-filter": sum4simp_job,
    "wivico-thresholds": wivico_job,
    "gain-classifier": gain_job,
    "pivot-select": pivot_job,
}
