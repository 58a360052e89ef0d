"""Training jobs and model versions: train on :func:`~annotation.services.training.dataset.training_set`
(built once per state of the data, :mod:`~annotation.services.training.current`),
register, promote, download and re-align (neural CRF paper §3–4; SPEC §5.1).

**A training job** (:func:`start_training`, :func:`run_training_job`) runs on the ``gpu`` queue
(CPU when the worker has no CUDA), reports each stage, every batch and epoch (loss, dev F1) with
time elapsed and an estimate (:mod:`annotation.services.training.reporting`), can be
cancelled between epochs, and ends with a ModelVersion whose metrics put its test Task 1/Task 2
scores beside the previous version's, the default's and the untrained crf's, measured on the
exhaustively annotated test articles only (:mod:`annotation.services.training.metrics`).
:func:`promote` asks for a confirmation before a version that is worse becomes the default.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
import zipfile
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation.models import (
    TRAIN_JOB,
    Article,
    Job,
    ModelVersion,
    Project,
)
from annotation.services import audit
from annotation.services.alignment.run_options import MODEL_KIND, default_version
from annotation.services.background import jobs, progress
from annotation.services.projects import language_tools
from annotation.services.training import current, metrics, reporting
from annotation.services.training.dataset import TrainingError
from annotation.services.training.request import TrainRequest

# --- Jobs --------------------------------------------------------------------------------------

def model_versions(project: Project):
    return ModelVersion.objects.filter(project=project, kind=MODEL_KIND)


def start_training(project: Project, request: TrainRequest | None = None, *, user=None, enqueue: bool = True) -> Job:
    """Check the data now (clear errors before anything is queued), then queue the job of a parsed ``request``
    (:class:`TrainRequest`, default: every option's default).

    Raises:
        TrainingError: nothing to train on, or a base version that is not the project's.
    """
    request = request or TrainRequest()
    if request.base_version is not None and not model_versions(project).filter(pk=request.base_version).exists():
        raise TrainingError("base_version: not a model version of this project")
    if (refusal := current.training_summary(project).refusal) is not None:
        raise TrainingError(refusal)
    params = {"config": request.config, "seed": request.seed, "base_version": request.base_version}
    with transaction.atomic():
        job = jobs.start_job(project, TRAIN_JOB, params=params, user=user, enqueue=enqueue)
        audit.record("training.start", actor=user, project=project, target=f"job #{job.pk}", seed=request.seed,
                     base_version=params["base_version"])
    return job


def cancel(job: Job, *, user=None) -> bool:
    return progress.cancel(Job, job.pk, user=user)


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
        if not progress.interrupted(Job, job_id, exc):  # a transient error: the retry trains again
            progress.fail(Job, job_id, exc)
        raise
    progress.succeed(Job, job_id, result={"model_version": version.pk, "metrics": version.metrics},
                     timings=version.training_snapshot.get("timings", {}))


def last_stage_times(project: Project) -> dict[str, float]:
    """``{stage: seconds}`` of the project's last training (empty before the first): the progress
    line's estimate of the stages still to come."""
    last = model_versions(project).order_by("-created_at", "-pk").values_list("training_snapshot", flat=True).first()
    return dict(((last or {}).get("timings") or {}).get("stages_s") or {})


def _version_dir(project: Project, name: str) -> Path:
    return Path(settings.MEDIA_ROOT) / "models" / f"project-{project.pk}" / name


def _train(job: Job) -> ModelVersion:
    from workers.engine import TrainingCancelled, train_aligner

    project, params = job.project, job.params
    started = time.monotonic()
    tracker = reporting.TrainingProgress(progress.reporter(Job, job.pk), expected=last_stage_times(project))
    tracker.begin("collect")
    data = current.current_training_set(project)  # the set the request checked, unless the data changed since
    parent = model_versions(project).filter(pk=params.get("base_version")).first() or default_version(project)
    base = language_tools.project_encoder(project)  # the project's encoder (None: the bundled MiniLM)
    # one name per job (not per attempt), so a later attempt clears what a lost worker half wrote
    name = f"crf-{job.created_at:%Y%m%d-%H%M%S}-job{job.pk}"
    out = _version_dir(project, name)
    if out.exists():
        shutil.rmtree(out)  # a re-queued or re-delivered job's half-written directory
    config = dict(params.get("config") or {})

    def on_epoch(epoch) -> None:  # an EpochReport: stage, epoch/epochs, loss, dev F1
        tracker.on_epoch(epoch)
        # where training got to (shown, and counted as life); a new attempt trains from the start
        progress.save_checkpoint(Job, job.pk, {"stage": epoch.stage, "epoch": epoch.epoch, "epochs": epoch.epochs})

    def cancelled() -> bool:  # cancelled, or this attempt lost the job to another worker
        return progress.should_stop(Job, job.pk)

    train = data.exhaustive["train"] or data.exhaustive["dev"]
    dev = data.exhaustive["dev"] if data.exhaustive["train"] else []
    try:
        manifest = train_aligner(train, str(out), dev=dev or None, base=base, config=config,
                                 seed=int(params.get("seed", 0)), progress=on_epoch, should_stop=cancelled,
                                 extra_examples=data.pair_examples, on_step=tracker.on_step)
    except TrainingCancelled:
        raise progress.Cancelled(f"training job #{job.pk} was cancelled") from None
    progress.check_cancelled(Job, job.pk)
    tracker.begin("measure")
    dev_metrics = {**((manifest.get("metrics") or {}).get("heldout") or {}), **metrics.dev_articles(manifest)}
    measured = {"dev": dev_metrics,
                "test": metrics.measure(data.exhaustive["test"], out, parent, default_version(project))}
    tracker.finish()
    snapshot = {**data.snapshot, "taken_at": timezone.now().isoformat(), "manifest": manifest, "config": config,
                "seed": params.get("seed", 0),
                "timings": {"total_s": round(time.monotonic() - started, 1), "stages_s": tracker.durations}}
    progress.check_cancelled(Job, job.pk)  # only the attempt that owns the job registers its version
    return ModelVersion.objects.create(project=project, name=name, kind=MODEL_KIND, path=str(out), parent=parent,
                                       training_snapshot=snapshot, metrics=measured, job=job, created_by=job.created_by)


class PromotionNeedsConfirmation(TrainingError):
    """Promoting this version would make crf runs worse (on the test articles): ask first."""

    def __init__(self, assessment: dict) -> None:
        super().__init__("promote anyway? " + "; ".join(assessment["warnings"]))
        self.assessment = assessment

    status = 409

    def payload(self) -> dict:
        return {**super().payload(), "needs_confirmation": True, "warnings": self.assessment["warnings"],
                "assessment": self.assessment}


def promote(version: ModelVersion, *, user=None, confirm: bool = False) -> dict:
    """Make ``version`` the project's default model for crf runs; returns its assessment.

    A version worse than the current default (or than the untrained crf) on the test articles is
    promoted only with ``confirm=True`` (else :class:`PromotionNeedsConfirmation`); the audit event
    keeps the metrics and the warnings either way.
    """
    project = version.project
    project.refresh_from_db(fields=["config"])  # the default as stored now, not as this object was loaded
    current = default_version(project)
    assessment = metrics.assess(version, current)
    if current is not None and current.pk == version.pk:
        return assessment  # already the default: nothing to change or record
    if assessment["needs_confirmation"] and not confirm:
        raise PromotionNeedsConfirmation(assessment)
    project.config = {**(project.config or {}), "default_model_version": version.pk}
    with transaction.atomic():
        project.save(update_fields=["config"])
        audit.record("model.promote", actor=user, project=project, target=version.name, version=version.pk,
                     previous_default=current.pk if current else None,
                     confirmed=bool(assessment["needs_confirmation"]), **metrics.promotion_record(version, assessment))
    return assessment


def realign(version: ModelVersion, *, scope: str = "all", user=None):
    """A crf run of the project with ``version``: all articles, or only articles without labels."""
    from annotation.services.alignment.alignment_runs import start_run

    if scope not in ("all", "unlabelled"):
        raise TrainingError("scope: choose all or unlabelled")
    if version.kind != MODEL_KIND:  # what start_run would refuse with a plain ValueError
        raise TrainingError(f"model_version: {version.name!r} is a {version.kind} model; "
                            f"crf runs use {MODEL_KIND} models")
    params = {}
    if scope == "unlabelled":
        labelled = (Article.objects.filter(project=version.project)
                    .annotate(n=Count("pairs__labels", filter=Q(pairs__labels__isnull=False))).filter(n__gt=0)
                    .values_list("pk", flat=True))
        params["skip_articles"] = sorted(labelled)
    return start_run(version.project, "crf", params=params, model_version=version, user=user)


def zip_version(version: ModelVersion) -> Path:
    """A zip of the version's directory (made once, next to it).

    The zip is built under a temporary name and renamed into place atomically, so a request never
    reads a half-written zip: parallel first downloads each build their own copy (the last rename
    wins, every copy is complete) and an open file stays valid when another copy replaces it.
    """
    root = Path(version.path)
    if not root.is_dir():
        raise TrainingError(f"the files of {version.name} are missing on this server")
    target = root.with_suffix(".zip")
    if not target.exists():
        fd, partial = tempfile.mkstemp(prefix=f".{root.name}-", suffix=".zip.partial", dir=root.parent)
        os.close(fd)
        try:
            with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
                for path in sorted(root.rglob("*")):
                    archive.write(path, path.relative_to(root).as_posix())
            os.replace(partial, target)
        finally:
            if os.path.exists(partial):
                os.unlink(partial)
    return target


__all__ = ["TRAIN_JOB", "PromotionNeedsConfirmation", "TrainingError", "cancel", "model_versions", "promote", "realign",
           "run_training_job", "start_training", "zip_version"]
