"""Thin Celery tasks: take ids, call a service, let the service record status on the row.

Every task is idempotent (a conditional QUEUED→RUNNING claim; pair writes are upserts), so
``acks_late`` re-delivery after a worker crash is safe. Only named transient errors retry.
"""
from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

TRANSIENT = (OperationalError, InterfaceError, ConnectionError, TimeoutError)


@shared_task(name="workers.tasks.run_alignment", acks_late=True, autoretry_for=TRANSIENT,
             retry_backoff=True, max_retries=3)
def run_alignment(run_id: int) -> None:
    """Align a project's corpus (gpu queue; uses CUDA when the worker has it, CPU otherwise)."""
    from annotation.services.alignment_runs import execute_run

    execute_run(run_id)


@shared_task(name="workers.tasks.corpus_stats", acks_late=True, autoretry_for=TRANSIENT,
             retry_backoff=True, max_retries=3)
def corpus_stats(job_id: int) -> None:
    """Count articles, documents and sentences per level (cpu queue)."""
    from annotation.services.corpus_stats import run_stats_job

    run_stats_job(job_id)


JOB_TASKS = {"corpus-stats": corpus_stats}
