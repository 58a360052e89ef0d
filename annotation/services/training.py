"""Retraining the aligner on the project's annotations (neural CRF paper §3–4; SPEC §5.1).

**Training data** (:func:`training_set`) comes from article-level splits (the export's, assigned
with the project's split policy when an article has none):

* *exhaustive article pairs* train the CRF and the pair model: document pairs an annotator
  declared complete in the whole-article view (their links; every unlinked pair = not aligned),
  and document pairs imported with gold (the import's gold is exhaustive). Where a pair has
  adjudicated gold, it overrides the annotators' links;
* *pair-level labels* of the train articles' other sentence pairs (adjudicated gold, else the
  counted majority of crowd votes — quality control applied) train the pair model only.

Train articles train, dev articles stop early and tune the thresholds, test articles are only
measured. The snapshot of exactly what was used (ids, counts, a hash) is stored on the
:class:`~annotation.models.ModelVersion`.

**A training job** (:func:`start_training`, :func:`run_training_job`) runs on the ``gpu`` queue
(CPU when the worker has no CUDA), reports every epoch (loss, dev F1) as progress, can be
cancelled between epochs, and ends with a ModelVersion whose metrics put its test Task 1/Task 2
scores beside the previous version's and the untrained crf's.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db.models import Count, Q
from django.utils import timezone

from workers.engine.types import ArticlePair

from ..models import (
    Adjudication,
    Article,
    ArticleCompletion,
    CandidatePair,
    Document,
    Job,
    Label,
    ModelVersion,
    Project,
    Split,
    Status,
)
from . import jobs, language_tools, progress, qc
from .adjudication import majority_value
from .alignment_runs import engine_document

TRAIN_JOB = "train-aligner"
LINK = ("aligned", "partial")
MODEL_KIND = "crf"


class TrainingError(ValueError):
    """Training cannot start or went wrong in a way the researcher can fix (message says how)."""


@dataclass
class TrainingSet:
    """What one training uses: exhaustive article pairs per split, pair-level examples, and a record."""

    exhaustive: dict[str, list[ArticlePair]] = field(default_factory=lambda: {"train": [], "dev": [], "test": []})
    pair_examples: list[tuple[str, str, str]] = field(default_factory=list)  # (complex, simple, class)
    snapshot: dict = field(default_factory=dict)


# --- Data --------------------------------------------------------------------------------------

def article_splits(project: Project) -> dict[int, str]:
    """Every article's split: its stored one, else the one the project's split policy plans for it."""
    from .export import splits

    stored = dict(Split.objects.filter(article__project=project).values_list("article_id", "name"))
    missing = Article.objects.filter(project=project).exclude(pk__in=stored).exists()
    if missing:
        planned = splits.plan(project, splits.project_policy(project))
        stored.update({a: name for a, name in planned.items() if a not in stored and name})
    return stored


def _counts_as(project: Project) -> dict[str, str]:
    return {v["value"]: v.get("counts_as", "not") for v in project.label_scheme.values}


def resolved_labels(project: Project, pairs) -> dict[int, str]:
    """``{pair id: class}`` (aligned/partial/not): gold where there is gold, else the counted majority."""
    counts_as = _counts_as(project)
    out = {pid: counts_as.get(v, "not") for pid, v in Adjudication.objects.filter(pair__in=pairs).values_list("pair_id", "value")}
    votes: dict[int, list[str]] = defaultdict(list)
    for pid, value in qc.counted_labels(project).filter(pair__in=pairs).exclude(pair_id__in=list(out)).values_list("pair_id", "value"):
        votes[pid].append(value)
    for pid, values in votes.items():
        value = majority_value(values)
        if value is not None:
            out[pid] = counts_as.get(value, "not")
    return out


def _exhaustive_links(project: Project, complex_doc: int, simple_doc: int, annotators: list[int],
                      imported: bool) -> dict[tuple[int, int], str]:
    """``{(ci, si): aligned|partial}`` of one exhaustively annotated document pair."""
    counts_as = _counts_as(project)
    pairs = CandidatePair.objects.filter(complex_document_id=complex_doc, simple_document_id=simple_doc)
    gold = {pid: counts_as.get(v, "not") for pid, v in
            Adjudication.objects.filter(pair__in=pairs).values_list("pair_id", "value")}
    votes: dict[int, list[str]] = defaultdict(list)
    for pid, _annotator, value in (Label.objects.filter(pair__in=pairs, annotator_id__in=annotators)
                                  .values_list("pair_id", "annotator_id", "value")):
        votes[pid].append(counts_as.get(value, "not"))
    links: dict[tuple[int, int], str] = {}
    for pair in pairs.only("pk", "complex_key", "simple_key"):
        if pair.pk in gold and (imported or gold[pair.pk] != "not" or pair.pk in votes):
            value = gold[pair.pk]
        elif annotators and votes.get(pair.pk):
            # a link when most completers linked it (ties: the stronger judgement, partial over not)
            ranked = Counter(votes[pair.pk]) + Counter({"not": len(annotators) - len(votes[pair.pk])})
            linked = ranked["aligned"] + ranked["partial"]
            value = ("aligned" if ranked["aligned"] >= ranked["partial"] else "partial") if linked * 2 >= len(annotators) else "not"
        else:
            continue
        if value in LINK:
            for c in pair.complex_indices:
                for s in pair.simple_indices:
                    links[(c, s)] = value if links.get((c, s)) != "aligned" else "aligned"
    return links


def exhaustive_document_pairs(project: Project) -> list[tuple[int, int, int, list[int], bool]]:
    """``(article, complex doc, simple doc, completing annotators, has imported gold)`` of every
    exhaustively annotated document pair of the project."""
    found: dict[tuple[int, int, int], tuple[list[int], bool]] = {}
    excluded = qc.excluded_annotators(project)  # quality control applies to completed article pairs too
    for article, c, s, annotator in (ArticleCompletion.objects.filter(article__project=project)
                                     .exclude(annotator_id__in=excluded)
                                     .values_list("article_id", "complex_document_id", "simple_document_id", "annotator_id")):
        found.setdefault((article, c, s), ([], False))[0].append(annotator)
    for article, c, s in (CandidatePair.objects.filter(article__project=project, gold__provenance=Adjudication.IMPORTED)
                          .values_list("article_id", "complex_document_id", "simple_document_id").distinct()):
        annotators, _ = found.get((article, c, s), ([], False))
        found[(article, c, s)] = (annotators, True)
    return [(a, c, s, annotators, imported) for (a, c, s), (annotators, imported) in sorted(found.items())]


def training_set(project: Project) -> TrainingSet:
    """The project's training data now (see the module docstring)."""
    split_of = article_splits(project)
    data = TrainingSet()
    docs: dict[int, Document] = {}
    covered: set[tuple[int, int]] = set()
    sources = Counter()
    for article, c, s, annotators, imported in exhaustive_document_pairs(project):
        split = split_of.get(article)
        if split not in data.exhaustive:
            continue
        links = _exhaustive_links(project, c, s, annotators, imported)
        for doc_id in (c, s):
            docs.setdefault(doc_id, Document.objects.get(pk=doc_id))
        ordered = sorted(links)
        data.exhaustive[split].append(ArticlePair(
            id=f"{article}:{c}-{s}", complex=engine_document(docs[c]), simple=engine_document(docs[s]),
            gold=tuple(ordered), gold_labels=tuple(links[k] for k in ordered)))
        covered.add((c, s))
        sources["imported" if imported else "completed"] += 1
    train_articles = [a for a, name in split_of.items() if name == "train"]
    pairs = CandidatePair.objects.filter(article_id__in=train_articles)
    labelled = resolved_labels(project, pairs)
    texts = _pair_texts([pid for pid in labelled])
    for pid, value in sorted(labelled.items()):
        doc_pair = texts.get(pid)
        if doc_pair is None or doc_pair[0] in covered:
            continue
        data.pair_examples.append((doc_pair[1], doc_pair[2], value))
    data.snapshot = _snapshot(data, split_of, sources)
    return data


def _pair_texts(pair_ids: list[int]) -> dict[int, tuple[tuple[int, int], str, str]]:
    out: dict[int, tuple[tuple[int, int], list, list]] = {}
    rows = (CandidatePair.objects.filter(pk__in=pair_ids)
            .values_list("pk", "complex_document_id", "simple_document_id", "members__side", "members__sentence__index",
                         "members__sentence__text"))
    for pid, c, s, side, index, text in rows:
        entry = out.setdefault(pid, ((c, s), [], []))
        (entry[1] if side == "complex" else entry[2]).append((index, text))
    return {pid: (key, " ".join(t for _, t in sorted(cs)), " ".join(t for _, t in sorted(ss)))
            for pid, (key, cs, ss) in out.items()}


def _snapshot(data: TrainingSet, split_of: dict[int, str], sources: Counter) -> dict:
    def digest(obj) -> str:
        return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]

    exhaustive = {name: [p.id for p in pairs] for name, pairs in data.exhaustive.items()}
    return {
        "articles": dict(Counter(split_of.values())),
        "exhaustive_pairs": exhaustive,
        "exhaustive_links": {name: sum(len(p.gold or ()) for p in pairs) for name, pairs in data.exhaustive.items()},
        "exhaustive_sources": dict(sources),
        "pair_examples": len(data.pair_examples),
        "pair_example_classes": dict(Counter(v for _, _, v in data.pair_examples)),
        "hash": digest({"exhaustive": [(p.id, p.gold, p.gold_labels) for ps in data.exhaustive.values() for p in ps],
                        "pairs": data.pair_examples}),
        "taken_at": timezone.now().isoformat(),
    }


# --- Jobs --------------------------------------------------------------------------------------

def model_versions(project: Project):
    return ModelVersion.objects.filter(project=project, kind=MODEL_KIND)


def default_version(project: Project) -> ModelVersion | None:
    """The version the project aligns with by default (promoted by a researcher), if any."""
    pk = (project.config or {}).get("default_model_version")
    return model_versions(project).filter(pk=pk).first() if pk else None


def start_training(project: Project, *, user=None, config: dict | None = None, seed: int = 0,
                   base_version: ModelVersion | None = None, enqueue: bool = True) -> Job:
    """Check the data and options now (clear errors before anything is queued), then queue the job."""
    from workers.engine.training.config import TrainConfig

    if config is not None and not isinstance(config, dict):
        raise TrainingError("config: must be a JSON object of training options")
    _check_types(config or {})
    try:
        TrainConfig.build(config)
    except (ValueError, TypeError) as exc:  # TypeError: a value of the wrong type, e.g. "epochs": "many"
        raise TrainingError(f"config: {exc}") from None
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**31:
        raise TrainingError("seed: must be an integer from 0 to 2147483647")
    if base_version is not None and base_version.project_id != project.pk:
        raise TrainingError("base_version: not a model version of this project")
    data = training_set(project)
    if not data.exhaustive["train"] and not data.pair_examples:
        raise TrainingError("nothing to train on yet: mark article pairs complete in the whole-article view, import "
                            "gold, or label pairs of train articles")
    if not data.exhaustive["train"] and not data.exhaustive["dev"]:
        raise TrainingError("the CRF needs at least one exhaustively annotated article pair (train or dev): mark "
                            "an article pair complete in the whole-article view, or import gold")
    params = {"config": config or {}, "seed": seed, "base_version": base_version.pk if base_version else None}
    return jobs.start_job(project, TRAIN_JOB, params=params, user=user, enqueue=enqueue)


def _check_types(config: dict) -> None:
    """Each known option has the type of its default (ints for counts, numbers for rates, text)."""
    from dataclasses import fields

    from workers.engine.training.config import TrainConfig

    for f in fields(TrainConfig):
        if f.name not in config or config[f.name] is None:
            continue
        value, default = config[f.name], f.default
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif isinstance(default, float):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        else:
            ok = isinstance(value, str)
        if not ok:
            kind = "an integer" if isinstance(default, int) else "a number" if isinstance(default, float) else "text"
            raise TrainingError(f"config: {f.name} must be {kind}, got {value!r}")


def cancel(job: Job) -> bool:
    return progress.cancel(Job, job.pk)


def run_training_job(job_id: int) -> None:
    """The Celery task's body: train, evaluate, register the version. Idempotent under redelivery:
    a job that already produced its version is not trained again."""
    if not progress.claim(Job, job_id):
        return
    job = Job.objects.select_related("project").get(pk=job_id)
    if ModelVersion.objects.filter(job=job).exists():
        version = ModelVersion.objects.get(job=job)
        progress.succeed(Job, job_id, result={"model_version": version.pk})
        return
    try:
        version = _train(job)
    except progress.Cancelled:
        return
    except Exception as exc:  # noqa: BLE001 - stored on the job (errors as data), then re-raised
        progress.fail(Job, job_id, exc)
        raise
    progress.succeed(Job, job_id, result={"model_version": version.pk, "metrics": version.metrics},
                     timings=version.training_snapshot.get("timings", {}))


def _version_dir(project: Project, name: str) -> Path:
    return Path(settings.MEDIA_ROOT) / "models" / f"project-{project.pk}" / name


def _train(job: Job) -> ModelVersion:
    from workers.engine.training import TrainingCancelled, train_aligner

    project, params = job.project, job.params
    started = time.monotonic()
    report = progress.reporter(Job, job.pk)
    report(0.01, "collecting the training data")
    data = training_set(project)
    parent = model_versions(project).filter(pk=params.get("base_version")).first() or default_version(project)
    base = language_tools.project_encoder(project)  # the project's encoder (None: the bundled MiniLM)
    name = f"crf-{timezone.now():%Y%m%d-%H%M%S}-job{job.pk}"
    out = _version_dir(project, name)
    if out.exists():
        shutil.rmtree(out)  # a redelivered job's half-written directory
    config = dict(params.get("config") or {})

    def on_epoch(epoch) -> None:  # an EpochReport: stage, epoch/epochs, loss, dev F1
        stage = 0.0 if epoch.stage == "pair_model" else 0.5
        report(0.05 + 0.85 * (stage + 0.5 * epoch.epoch / max(1, epoch.epochs)), epoch.line())

    def cancelled() -> bool:
        return Job.objects.filter(pk=job.pk, status=Status.CANCELLED).exists()

    train = data.exhaustive["train"] or data.exhaustive["dev"]
    dev = data.exhaustive["dev"] if data.exhaustive["train"] else []
    try:
        manifest = train_aligner(train, str(out), dev=dev or None, base=base, config=config,
                                 seed=int(params.get("seed", 0)), progress=on_epoch, should_stop=cancelled,
                                 extra_examples=data.pair_examples)
    except TrainingCancelled:
        raise progress.Cancelled(f"training job #{job.pk} was cancelled") from None
    progress.check_cancelled(Job, job.pk)
    report(0.92, "measuring on the test articles")
    metrics = {"dev": (manifest.get("metrics") or {}).get("heldout", {}), "test": _test_metrics(data.exhaustive["test"], out, parent)}
    snapshot = {**data.snapshot, "manifest": manifest, "config": config, "seed": params.get("seed", 0),
                "timings": {"total_s": round(time.monotonic() - started, 1)}}
    return ModelVersion.objects.create(project=project, name=name, kind=MODEL_KIND, path=str(out), parent=parent,
                                       training_snapshot=snapshot, metrics=metrics, job=job, created_by=job.created_by)


def _test_metrics(test: list[ArticlePair], path: Path, parent: ModelVersion | None) -> dict:
    """Task 1/Task 2 on the test articles: this version, the previous one, the untrained crf."""
    if not test:
        return {}
    from workers.engine import align, evaluate

    def score(model: str | None) -> dict:
        result = evaluate(align(test, "crf", model=model), test)
        return {"task1": result["task1"], "task2": result["task2"]}

    out = {"n_article_pairs": len(test), "this": score(str(path)), "untrained": score(None)}
    if parent is not None and Path(parent.path).exists():
        out["previous"] = score(parent.path)
    return out


def promote(version: ModelVersion) -> None:
    """Make ``version`` the project's default model for crf runs."""
    project = version.project
    project.config = {**(project.config or {}), "default_model_version": version.pk}
    project.save(update_fields=["config"])


def realign(version: ModelVersion, *, scope: str = "all", user=None):
    """A crf run of the project with ``version``: all articles, or only articles without labels."""
    from .alignment_runs import start_run

    if scope not in ("all", "unlabelled"):
        raise TrainingError("scope: choose all or unlabelled")
    params = {}
    if scope == "unlabelled":
        labelled = (Article.objects.filter(project=version.project)
                    .annotate(n=Count("pairs__labels", filter=Q(pairs__labels__isnull=False))).filter(n__gt=0)
                    .values_list("pk", flat=True))
        params["skip_articles"] = sorted(labelled)
    return start_run(version.project, "crf", params=params, model_version=version, user=user)


def zip_version(version: ModelVersion) -> Path:
    """A zip of the version's directory (made once, next to it)."""
    root = Path(version.path)
    if not root.is_dir():
        raise TrainingError(f"the files of {version.name} are missing on this server")
    target = root.with_suffix(".zip")
    if not target.exists():
        shutil.make_archive(str(root), "zip", root_dir=root)
    return target


__all__ = ["TRAIN_JOB", "TrainingError", "TrainingSet", "cancel", "default_version", "exhaustive_document_pairs",
           "model_versions", "promote", "realign", "resolved_labels", "run_training_job", "start_training",
           "training_set", "zip_version"]
