"""Thin Celery tasks: take ids, call a service, let the service record status on the row.

Every task is idempotent (a conditional claim: QUEUED, or RUNNING with a lost worker → RUNNING;
pair writes are upserts), so ``acks_late`` re-delivery after a worker crash is safe, and a copy
delivered while a live worker runs the work is dropped. While a task runs its row's heartbeat is
stamped (``annotation.services.background.progress``); the task releases the row when it ends.
Only named transient errors retry.
"""
from __future__ import annotations

import importlib

from celery import shared_task
from django.db import InterfaceError, OperationalError

TRANSIENT = (OperationalError, InterfaceError, ConnectionError, TimeoutError)


@shared_task(name="workers.tasks.run_alignment", acks_late=True, autoretry_for=TRANSIENT,
             retry_backoff=True, max_retries=3)
def run_alignment(run_id: int) -> None:
    """Align a project's corpus (gpu queue; uses CUDA when the worker has it, CPU otherwise)."""
    from annotation.models import AlignmentRun
    from annotation.services.alignment.alignment_runs import execute_run
    from annotation.services.background import progress

    try:
        execute_run(run_id)
    finally:
        progress.release(AlignmentRun, run_id)


def job_task(name: str, service: str, doc: str):
    """A thin task running ``service(job_id)`` (``"module.function"``, imported when it runs, so the
    worker loads only what its jobs need); routed by its name (workers/queues.py)."""
    module, function = service.rsplit(".", 1)

    def run(job_id: int) -> None:
        from annotation.models import Job
        from annotation.services.background import progress

        try:
            getattr(importlib.import_module(module), function)(job_id)
        finally:
            progress.release(Job, job_id)

    run.__name__ = run.__qualname__ = name
    run.__doc__ = doc
    return shared_task(name=f"workers.tasks.{name}", acks_late=True, autoretry_for=TRANSIENT,
                       retry_backoff=True, max_retries=3)(run)


def mining_task(name: str, stage: str, doc: str):
    """A thin task running one chunk of a mining run (``annotation.services.alignment.mining.run_chunk``).

    Chunks are idempotent (a chunk whose output file exists is skipped; database writes are
    upserts), so ``acks_late`` re-delivery after a worker died is safe. A transient error is
    retried; on the last try, or on any other error, the run is marked failed."""

    def run(self, run_id: int, chunk: int = 0) -> None:
        from annotation.models import AlignmentRun
        from annotation.services.alignment.mining import run_chunk
        from annotation.services.background import progress

        with progress.heartbeat(AlignmentRun, run_id):  # the run is alive while any of its chunks runs
            run_chunk(run_id, stage, chunk, last_try=self.request.retries >= self.max_retries)

    run.__name__ = run.__qualname__ = name
    run.__doc__ = doc
    return shared_task(name=f"workers.tasks.{name}", bind=True, acks_late=True, autoretry_for=TRANSIENT,
                       retry_backoff=True, max_retries=3)(run)


@shared_task(name="workers.tasks.reap_stale", ignore_result=True)
def reap_stale() -> dict:
    """Re-queue (or fail) work whose worker was lost (Celery beat, when it runs; workers and pages
    also reap without it, see ``annotation.services.background.liveness``)."""
    from annotation.services.background.liveness import reap_stale as reap

    reaped = reap()
    return {"requeued": reaped.requeued, "failed": reaped.failed}


# Mining runs (method "muss-corpus"): run_alignment plans the job, these run its chunks.
mine_encode_shard = mining_task("mine_encode_shard", "encode",
                                "Embed one shard of a mining run's sequences (gpu queue: the sentence encoder).")
mine_build_index = mining_task("mine_build_index", "index", "Build a mining run's faiss index from its shards (cpu queue).")
mine_search_shard = mining_task("mine_search_shard", "search",
                                "Search one shard's top-k neighbours and filter them (cpu queue).")
mine_merge = mining_task("mine_merge", "merge", "Merge, de-duplicate and orient a mining run's pairs (cpu queue).")
mine_save_shard = mining_task("mine_save_shard", "save", "Write one slice of mined pairs as sentence pairs (cpu queue).")

MINING_TASKS = {"encode": mine_encode_shard, "index": mine_build_index, "search": mine_search_shard,
                "merge": mine_merge, "save": mine_save_shard}

import_corpus = job_task("import_corpus", "annotation.services.corpus.importing.uploads.run_import_job",
                         "Import a large uploaded corpus in bounded memory, with progress (cpu queue).")
corpus_stats = job_task("corpus_stats", "annotation.services.corpus.corpus_stats.run_stats_job",
                        "Count articles, documents and sentences per level (cpu queue).")

# Scoring jobs (annotation/services/alignment/scoring.py): one task per kind so model-heavy ones route to gpu.
access_attributes = job_task("access_attributes", "annotation.services.alignment.scoring.run_scoring_job",
                             "ACCESS control attributes of every pair of a project or run (cpu queue).")
sum4simp_filter = job_task("sum4simp_filter", "annotation.services.alignment.scoring.run_scoring_job",
                           "Fit the Sum4Simp filter on a reference corpus, then score pairs (cpu queue).")
pivot_select = job_task("pivot_select", "annotation.services.alignment.scoring.run_scoring_job",
                        "Pivot-translation BLEU/FRES selectors over every pair (cpu queue).")
wivico_thresholds = job_task("wivico_thresholds", "annotation.services.alignment.scoring.run_scoring_job",
                             "Derive WIVICO n:m thresholds from annotated valid pairs (gpu queue: SBERT).")
gain_classifier = job_task("gain_classifier", "annotation.services.alignment.scoring.run_scoring_job",
                           "Train or apply the WIVICO simplicity-gain classifier (gpu queue).")
paragraph_alignment = job_task(
    "paragraph_alignment", "annotation.services.alignment.paragraph_correction.run_job",
    "Paragraph links of a whole project and/or sentence candidates within them (cpu queue; SBERT when "
    "the project's similarity is neural).")
export = job_task("export", "annotation.services.export.run_export_job",
                  "Write a gold or auto export (files, manifest, zip) under MEDIA_ROOT/exports/<id>/ (cpu queue).")

train_aligner = job_task("train_aligner", "annotation.services.training.versions.run_training_job",
                         "Retrain the aligner (pair model + CRF) on the project's annotations (gpu queue).")

JOB_TASKS = {
    "train-aligner": train_aligner,
    "corpus-stats": corpus_stats,
    "import": import_corpus,
    "access-attributes": access_attributes,
    "sum4simp-filter": sum4simp_filter,
    "wivico-thresholds": wivico_thresholds,
    "gain-classifier": gain_classifier,
    "pivot-select": pivot_select,
    "export": export,
    "paragraph-alignment": paragraph_alignment,
    "regenerate-candidates": paragraph_alignment,
}
