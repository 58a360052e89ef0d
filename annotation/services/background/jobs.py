"""Starting background work: create the row, then queue the task once the row is committed."""
from __future__ import annotations

from django.db import transaction

from annotation.models import AlignmentRun, Job, Project, Status
from annotation.services import audit


def start_job(project: Project, kind: str, *, params: dict | None = None, user=None, enqueue: bool = True) -> Job:
    from workers import tasks

    task = tasks.JOB_TASKS.get(kind)
    if task is None:
        raise ValueError(f"unknown job kind {kind!r}; choose one of: {', '.join(sorted(tasks.JOB_TASKS))}")
    job = Job.objects.create(project=project, kind=kind, params=params or {}, created_by=user)
    if enqueue:
        transaction.on_commit(lambda: task.delay(job.pk))
    return job


def enqueue_run(run: AlignmentRun) -> None:
    from workers import tasks

    transaction.on_commit(lambda: tasks.run_alignment.apply_async(args=[run.pk], queue=run.queue))


def retry_run(run: AlignmentRun, *, user=None) -> AlignmentRun:
    """Queue a failed run again; pairs it already wrote are kept (writes are idempotent).

    A mining run (``muss-corpus``) resumes: its finished chunks are kept and only the missing ones
    run. It may also be resumed while RUNNING — after a worker died and its messages were lost —
    since a chunk that runs twice is skipped or rewrites the same file."""
    resumable = (Status.FAILED, Status.RUNNING) if run.method == "muss-corpus" else (Status.FAILED,)
    if run.status not in resumable:
        raise ValueError(f"only failed runs can be retried (this one is {run.status})")
    AlignmentRun.objects.filter(pk=run.pk, status=run.status).update(
        status=Status.QUEUED, progress=0.0 if run.method != "muss-corpus" else run.progress,
        message="queued for retry", error="")
    audit.record("run.retry", actor=user, project=run.project, target=f"run #{run.pk}", method=run.method)
    run.refresh_from_db()
    enqueue_run(run)
    return run
