"""Sending background work to the workers: by task name through the Celery app, on the queue the
registry (:mod:`~annotation.services.background.registry`) gives it — services never import
``workers.tasks``. These publish at once (a broker error reaches the caller); ``background.jobs``
queues them with ``transaction.on_commit`` so a worker never looks for a row not yet committed."""
from __future__ import annotations

from alignapp.celery import app
from annotation.models import AlignmentRun, Job
from annotation.services.background import registry


def send(work: registry.Work, *args: object, queue: str | None = None) -> None:
    """Publish ``work``'s task with ``args`` (on ``queue``, else the registry's queue for it)."""
    app.send_task(work.task, args=list(args), queue=queue or work.queue.value)


def send_run(run: AlignmentRun) -> None:
    """An alignment run's task, on the run's own queue (gpu unless it asked for cpu)."""
    send(registry.RUN, run.pk, queue=run.queue)


def send_job(job: Job) -> None:
    send(registry.job(job.kind), job.pk)


def send_run_chunk(run: AlignmentRun, chunk: int, *, queue: str | None = None) -> None:
    """One chunk of an alignment run, on ``queue`` (else the run's own queue, like the run)."""
    send(registry.RUN_CHUNK, run.pk, chunk, queue=queue or run.queue)
