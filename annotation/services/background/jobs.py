"""Starting background work: create the row, then queue the task once the row is committed; retry it."""
from __future__ import annotations

from functools import partial

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from alignapp.celery import app
from annotation.errors import DomainError
from annotation.models import AlignmentRun, Job, Project, Status
from annotation.services import audit
from annotation.services.background import dispatch, liveness, progress, registry


class RetryRefused(DomainError, ValueError):
    """A run or job that cannot be retried now: it succeeded, runs on a live worker, or changed meanwhile
    (``code`` says which)."""


def start_job(project: Project, kind: str, *, params: dict | None = None, user=None, enqueue: bool = True) -> Job:
    work = registry.job(kind)  # UnknownName (a ValueError) for a kind the registry does not know
    job = Job.objects.create(project=project, kind=kind, params=params or {}, created_by=user)
    if enqueue:  # the work found above, published as it is once the row commits: no second look-up, no relay
        transaction.on_commit(partial(app.send_task, work.task, args=[job.pk], queue=work.queue.value))
    return job


def enqueue_run(run: AlignmentRun) -> None:
    transaction.on_commit(lambda: dispatch.send_run(run))


def enqueue_job(job: Job) -> None:
    transaction.on_commit(lambda: dispatch.send_job(job))


def enqueue(work: AlignmentRun | Job) -> None:
    """Send the task of a run or job (once the current transaction commits)."""
    enqueue_run(work) if isinstance(work, AlignmentRun) else enqueue_job(work)


def retry_run(run: AlignmentRun, *, user=None) -> AlignmentRun:
    """Queue a run again from any state but success: failed, cancelled, queued (its message is sent
    again: it may have been lost with the broker), or running once its worker was lost (no
    heartbeat for ``WORKER_STALE_SECONDS``). Pairs it already wrote are kept (writes are idempotent)
    and it resumes from its checkpoint: the document pairs it had finished are not aligned again.

    A planned run (its chunks, mining runs too) may be resumed while RUNNING even with a live heartbeat:
    the plan task re-sends only its missing chunks, and a chunk a live worker holds is not claimed twice."""
    run = _retry(run)
    audit.record("run.retry", actor=user, project=run.project, target=f"run #{run.pk}", method=run.method)
    return run


def retry_job(job: Job, *, user=None) -> Job:
    """Queue a job again, under the same rules as :func:`retry_run` (a training job that already
    registered its model version just succeeds: one version per job). A job of a kind this server no longer
    knows (its extension was removed) is refused before anything changes: no worker would take its message."""
    if job.kind not in dict(registry.jobs()):
        raise RetryRefused(f"job #{job.pk} is a {job.kind!r} job, a kind this server does not know (any more); "
                           "start a new job instead", code="unknown_kind")
    job = _retry(job)
    audit.record("job.retry", actor=user, project=job.project, target=f"job #{job.pk}", kind=job.kind)
    return job


def can_retry(work: AlignmentRun | Job) -> bool:
    """Whether :func:`retry_run` / :func:`retry_job` would accept it now (the page's Retry button)."""
    if work.status == Status.SUCCEEDED:
        return False
    return work.status != Status.RUNNING or _is_chunked(work) or liveness.is_lost(work)


def _is_chunked(work: AlignmentRun | Job) -> bool:
    """A run planned into chunks that workers share: a retry re-sends its missing chunks."""
    return isinstance(work, AlignmentRun) and "chunks" in (work.checkpoint or {})


def _retry(work: AlignmentRun | Job) -> AlignmentRun | Job:
    model = type(work)
    name = f"{'run' if model is AlignmentRun else 'job'} #{work.pk}"
    chunked = _is_chunked(work)
    now = timezone.now()
    if work.status == Status.SUCCEEDED:
        raise RetryRefused(f"{name} succeeded; start a new one instead of retrying it", code="succeeded")
    condition = Q(pk=work.pk, status=work.status)
    if work.status == Status.RUNNING and not chunked:
        if not liveness.is_lost(work, now):
            seen = work.heartbeat_at or work.started_at
            ago = f"last heartbeat {(now - seen).total_seconds():.0f} s ago" if seen else "no heartbeat yet"
            raise RetryRefused(
                f"{name} is running on {work.worker or 'a worker'} ({ago}); cancel it first, or wait: "
                f"work with no heartbeat for {settings.WORKER_STALE_SECONDS} s counts as lost and can be retried",
                code="running")
        condition &= progress.lost(now)
    checkpoint = {**(work.checkpoint or {}), "lost_workers": 0}  # a person decided: the loss count starts again
    if not model.objects.filter(condition).update(status=Status.QUEUED, message="queued for retry", error="",
                                                  finished_at=None, checkpoint=checkpoint):
        work.refresh_from_db()
        raise RetryRefused(f"{name} changed meanwhile (now {work.status}); look again before retrying", code="changed")
    work.refresh_from_db()
    enqueue(work)
    return work
