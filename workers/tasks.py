"""Thin Celery tasks, one per task name of the registry (``annotation/services/background/registry.py``):
each takes ids, calls its service, and lets the service record status on the row.

Four generic bodies — a job, an alignment run, a chunk of an alignment run (a mining run's chunks too), the
reaper — are registered
under the registry's task names with its retry rule, so adding a job kind changes nothing here.
Every task is idempotent (a conditional claim: QUEUED, or RUNNING with a lost worker → RUNNING;
pair writes are upserts), so ``acks_late`` re-delivery after a worker crash is safe, and a copy
delivered while a live worker runs the work is dropped. While a task runs its row's heartbeat is
stamped (``annotation.services.background.progress``); the task releases the row when it ends.
Only the registry's transient errors retry.
"""
from __future__ import annotations

from collections.abc import Callable

from celery import Task, shared_task

from annotation.services.background import registry
from annotation.services.background.registry import Work


def _register(work: Work, body: Callable, **options: object) -> Task:
    """``body`` as the Celery task ``work.task``, with the work's retry rule."""
    body.__name__ = body.__qualname__ = work.task.rsplit(".", 1)[-1]
    body.__doc__ = f"{work.doc} ({work.queue.value} queue)"
    retry = work.retry
    return shared_task(name=work.task, acks_late=retry.acks_late, autoretry_for=retry.on, retry_backoff=True,
                       max_retries=retry.max_retries, **options)(body)


def _released(work: Work, model: str) -> Callable[[int], None]:
    """``service(pk)``, after which the row of ``model`` (``Job``, ``AlignmentRun``) is released (its
    heartbeat stops; imported when it runs, so the worker loads only what its work needs)."""

    def run(pk: int) -> None:
        from annotation import models
        from annotation.services.background import progress
        from annotation.services.background.one_core import one_core

        try:
            with one_core(work.one_core):
                work.function()(pk)
        finally:
            progress.release(getattr(models, model), pk)

    return run


def job_task(work: Work) -> Task:
    """``service(job_id)`` of a job kind."""
    return _register(work, _released(work, "Job"))


def run_task(work: Work) -> Task:
    """``service(run_id)`` of an alignment run (uses CUDA when the worker has it, CPU otherwise)."""
    return _register(work, _released(work, "AlignmentRun"))


def run_chunk_task(work: Work) -> Task:
    """One chunk of an alignment run or a mining run: ``service(run_id, chunk, last_try=...)``; the chunk
    claims its own row and keeps its own and the run's heartbeat (idempotent: pair writes are upserts)."""

    def run(self: Task, run_id: int, chunk: int = 0) -> None:
        work.function()(run_id, chunk, last_try=self.request.retries >= self.max_retries)

    return _register(work, run, bind=True)


def reaper_task(work: Work) -> Task:
    """Re-queue (or fail) work whose worker was lost (Celery beat, when it runs; workers and pages
    also reap without it, see ``annotation.services.background.liveness``)."""

    def run() -> dict:
        reaped = work.function()()
        return {"requeued": reaped.requeued, "failed": reaped.failed}

    return _register(work, run, ignore_result=True)


TASKS: dict[str, Task] = {registry.RUN.task: run_task(registry.RUN),
                          registry.RUN_CHUNK.task: run_chunk_task(registry.RUN_CHUNK),
                          registry.REAPER.task: reaper_task(registry.REAPER)}
"""Every task by name."""
for _kind, _work in registry.jobs():
    if _work.task not in TASKS:  # kinds sharing a task (paragraph-alignment, regenerate-candidates)
        TASKS[_work.task] = job_task(_work)
