"""``wivico-thresholds``: WIVICO's 1:1 cut-off = mean SBERT cosine of a *wivico run's* W1:V1 pairs annotated as
valid (a value whose ``counts_as`` is ``aligned``; ``run``, default the newest wivico run with such pairs),
propagated to the n:m configurations with the paper's decreasing shift over the window means of every document
pair that run aligned; all nine valid and partial cut-offs are stored in ``project.config["wivico"]`` where later
``wivico`` runs pick them up (the wivico method's ``project_keys``)."""
from __future__ import annotations

from django.db import transaction

from annotation.models import AlignmentRun, CandidatePair, Job, Project
from annotation.services.corpus.documents import engine_pair, pair_texts
from annotation.services.projects import model_paths
from annotation.services.projects.language_tools import project_encoder
from annotation.services.scoring.common import ProgressFn, annotated_classes, target_pairs
from annotation.services.scoring.kinds import ScoringKind, register
from workers.engine import PROPAGATION_METHODS, Option

WIVICO_RUN_KEYS = ("max_n", "max_m", "max_tokens")  # a source run's window settings the window means reuse


def wivico_source_run(project: Project, params: dict) -> AlignmentRun:
    """The wivico run whose annotated 1:1 pairs give WIVICO's 1:1 cut-off: ``params["run"]`` (it must
    be a wivico run), else the newest wivico run with an annotated 1:1 pair that counts as valid.

    Raises:
        ScoringRefused: the given run is not a wivico run, or no wivico run has such a pair.
    """
    from annotation.services.scoring.jobs import ScoringRefused

    if params.get("run") is not None:
        run = AlignmentRun.objects.get(pk=params["run"], project=project)
        if run.method != "wivico":
            raise ScoringRefused(f"run #{run.pk} is a {run.method} run: WIVICO's 1:1 cut-off is the mean SBERT score "
                                 "of valid pairs of a wivico run (its scores are on that scale); choose a wivico run",
                                 code="not_a_wivico_run")
        return run
    for run in project.runs.filter(method="wivico").order_by("-created_at", "-pk"):
        chosen, classes = _wivico_one_to_one(project, run, params)
        if any(classes[p.pk] == "aligned" for p in chosen):
            return run
    raise ScoringRefused("no annotated 1:1 pair of a wivico run counts as valid (aligned) in this project; run "
                         "wivico, then label or adjudicate some of its 1:1 pairs first", code="no_valid_pairs")


def _wivico_one_to_one(project: Project, run: AlignmentRun, params: dict) -> tuple[list[CandidatePair], dict[int, str]]:
    """The run's predicted W1:V1 pairs annotated valid or partially valid, and their classes."""
    pairs = target_pairs(project, {**params, "run": run.pk}).exclude(complex_key__contains=",").exclude(
        simple_key__contains=",")
    classes = annotated_classes(project, pairs)
    chosen = [p for p in pairs.filter(pk__in=list(classes)).only("id", "complex_key", "simple_key")
              if classes[p.pk] in ("aligned", "partial")]
    return chosen, classes


def _one_to_one_cutoffs(project: Project, run: AlignmentRun, params: dict, report: ProgressFn):
    """The 1:1 valid and partial cut-offs from the mean SBERT score of the run's annotated W1:V1 pairs;
    returns ``(threshold, partial, labels of those pairs, model name, encoder)``."""
    import numpy as np

    from annotation.services.scoring.jobs import ScoringRefused
    from workers.engine import calibrate_label_thresholds, default_encoder

    one_to_one, classes = _wivico_one_to_one(project, run, params)
    if not any(classes[p.pk] == "aligned" for p in one_to_one):
        raise ScoringRefused(f"no annotated 1:1 pair of wivico run #{run.pk} counts as valid (aligned); label or "
                             "adjudicate some of its 1:1 pairs first", code="no_valid_pairs")
    texts = pair_texts([p.pk for p in one_to_one])
    one_to_one = [p for p in one_to_one if p.pk in texts]
    chosen = params.get("model") or run.params.get("model")  # checked again here: a link may have changed
    model = model_paths.resolve(chosen, "model", project) if chosen else project_encoder(project)
    encoder = default_encoder(model)
    report(0.05, f"wivico-thresholds: encoding {len(one_to_one)} annotated 1:1 pairs of run #{run.pk}")
    complex_vec = encoder.encode([texts[p.pk][0] for p in one_to_one])
    simple_vec = encoder.encode([texts[p.pk][1] for p in one_to_one])
    cosines = np.sum(np.asarray(complex_vec) * np.asarray(simple_vec), axis=1).astype(float).tolist()
    labels = [classes[p.pk] for p in one_to_one]
    cut = calibrate_label_thresholds(cosines, labels)
    threshold = cut["valid"]
    partial = cut.get("partial", threshold - 0.15)
    return threshold, partial, labels, model, encoder


def run(job: Job, report: ProgressFn) -> dict:
    """WIVICO §3.2.2: 1:1 cut-off = mean SBERT score of a wivico run's valid W1:V1 pairs; the other
    configurations' cut-offs by the decreasing shift over the window means of **every** document pair
    the run aligned (Figure 3: all samples of the corpus); all of them stored for later runs."""
    from annotation.services.alignment.run_work import document_pairs
    from workers.engine import WivicoAligner

    project, params = job.project, job.params
    run = wivico_source_run(project, params)
    threshold, partial, labels, model, encoder = _one_to_one_cutoffs(project, run, params, report)

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


def check(project: Project, params: dict) -> None:
    """The cut-offs are learnt from a wivico run's annotated 1:1 pairs."""
    from annotation.services.scoring.jobs import ScoringRefused

    if params.get("run") is not None:
        method = project.runs.get(pk=params["run"]).method
        if method != "wivico":
            raise ScoringRefused(f"run {params['run']} is a {method} run; WIVICO's cut-offs are learnt from a wivico "
                                 "run's annotated 1:1 pairs", code="not_a_wivico_run")


register(ScoringKind(
    "wivico-thresholds", "Derive WIVICO n:m thresholds from annotated valid pairs (SBERT).", run, order=3,
    check=check, queue="gpu", task="wivico_thresholds",
    options=(Option("propagation", "str", "paper", choices=PROPAGATION_METHODS,
                    help="how the 1:1 cut-off is carried to the n:m configurations"),
             Option("model", "str", None, nullable=True,
                    help="the encoder (default: the source run's, else the project's)"),
             Option("max_document_pairs", "int", None, min=1, nullable=True,
                    help="window means over at most this many document pairs (default: every one of the run)"))))
