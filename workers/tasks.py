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


# Scoring jobs (annotation/services/scoring.py): one task per kind so model-heavy ones route to gpu.

@shared_task(name="workers.tasks.access_attributes", acks_late=True, autoretry_for=TRANSIENT,
             retry_backoff=True, max_retries=3)
def access_attributes(job_id: int) -> None:
    """ACCESS control attributes of every pair of a project or run (cpu queue)."""
    from annotation.services.scoring import run_scoring_job

    run_scoring_job(job_id)


@shared_task(name="workers.tasks.sum4simp_filter", acks_late=True, autoretry_for=TRANSIENT,
             retry_backoff=True, max_retries=3)
def sum4simp_filter(job_id: int) -> None:
    """Fit the Sum4Simp filter on a reference corpus, then score pairs (cpu queue)."""
    from annotation.services.scoring import run_scoring_job

    run_scoring_job(job_id)


@shared_task(name="workers.tasks.pivot_select", acks_late=True, autoretry_for=TRANSIENT,
             retry_backoff=True, max_retries=3)
def pivot_select(job_id: int) -> None:
    """Pivot-translation BLEU/FRES selectors over every pair (cpu queue)."""
    from annotation.services.scoring import run_scoring_job

    run_scoring_job(job_id)


@shared_task(name="workers.tasks.wivico_thresholds", acks_late=True, autoretry_for=TRANSIENT,
             retry_backoff=True, max_retries=3)
def wivico_thresholds(job_id: int) -> None:
    """Derive WIVICO n:m thresholds from annotated valid pairs (gpu queue: SBERT)."""
    from annotation.services.scoring import run_scoring_job

    run_scoring_job(job_id)


@shared_task(name="workers.tasks.gain_classifier", acks_late=True, autoretry_for=TRANSIENT,
             retry_backoff=True, max_retries=3)
def gain_classifier(job_id: int) -> None:
    """Train or apply the WIVICO simplicity-gain classifier (gpu queue)."""
    from annotation.services.scoring import run_scoring_job

    run_scoring_job(job_id)


@shared_task(name="workers.tasks.paragraph_alignment", acks_late=True, autoretry_for=TRANSIENT,
             retry_backoff=True, max_retries=3)
def paragraph_alignment(job_id: int) -> None:
    """Paragraph links of a whole project and/or sentence candidates within them (cpu queue; SBERT
    when the project's similarity is neural)."""
    from annotation.services.paragraph_correction import run_job

    run_job(job_id)


@shared_task(name="workers.tasks.export", acks_late=True, autoretry_for=TRANSIENT,
             retry_backoff=True, max_retries=3)
def export(job_id: int) -> None:
    """Write a gold or auto export (files, manifest, zip) under MEDIA_ROOT/exports/<id>/ (cpu queue)."""
    from annotation.services.export import run_export_job

    run_export_job(job_id)


JOB_TASKS = {
    "corpus-stats": corpus_stats,
    "access-attributes": access_attributes,
    "sum4simp-filter": sum4simp_filter,
    "wivico-thresholds": wivico_thresholds,
    "gain-classifier": gain_classifier,
    "pivot-select": pivot_select,
    "export": export,
    "paragraph-alignment": paragraph_alignment,
    "regenerate-candidates": paragraph_alignment,
}
