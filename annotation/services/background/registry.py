"""The one table of background work: each job kind — and alignment runs (mining runs too), their chunks
and the reaper — with its Celery task name, its service function, its queue and its retry rule.

Everything else reads this table: ``workers/tasks.py`` registers one thin task per task name,
``alignapp/celery.py`` routes by it, and services send work by task name through
:mod:`~annotation.services.background.dispatch`, so the web process never imports the worker's modules.
**Adding a job kind** is one :data:`JOBS` entry here plus its service function ``run(job_id)``, which
records progress and outcome on the ``Job`` row (:mod:`~annotation.services.background.progress`).

Service functions are dotted-path strings, imported when the task runs: this module imports no
area above ``background`` (nor Django's models, so the Celery app can read it while it configures).
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from django.db import InterfaceError, OperationalError


class Queue(str, Enum):
    """The two queues: ``gpu`` for work that runs a neural model (it uses CUDA when present, CPU
    otherwise), ``cpu`` for the rest."""

    CPU = "cpu"
    GPU = "gpu"


TRANSIENT: tuple[type[BaseException], ...] = (OperationalError, InterfaceError, ConnectionError, TimeoutError)
"""Errors worth another try (the database or broker away for a moment); any other error fails the work."""


@dataclass(frozen=True)
class Retry:
    """When a task is tried again: Celery retries it (with backoff) on ``on`` up to ``max_retries``
    times; ``acks_late`` re-delivers it after a worker crash (safe: every task is idempotent)."""

    on: tuple[type[BaseException], ...] = TRANSIENT
    max_retries: int = 3
    acks_late: bool = True


RETRY_TRANSIENT = Retry()
NO_RETRY = Retry(on=())  # the next pass runs anyway (the reaper)


@dataclass(frozen=True)
class Work:
    """One kind of background work: the Celery task's ``task`` name (what is sent, and what running
    workers know; kinds sharing a task share everything else too), ``service`` as ``"module.function"``,
    its ``queue`` and its ``retry`` rule."""

    task: str
    service: str
    queue: Queue
    doc: str
    retry: Retry = RETRY_TRANSIENT
    lost: str = ""  # "module.function" called as lost(job_id) once the reaper fails a lost job: undo its writes

    def function(self) -> Callable[..., object]:
        """The service function (imported now)."""
        return _load(self.service)


def _load(dotted: str) -> Callable[..., object]:
    module, name = dotted.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def _task(name: str) -> str:
    return f"workers.tasks.{name}"


_SCORING = "annotation.services.scoring.jobs.run_scoring_job"
_PARAGRAPHS = Work(_task("paragraph_alignment"), "annotation.services.alignment.paragraph_alignment.run_job", Queue.CPU,
                   "Paragraph links of a whole project and/or sentence candidates within them (SBERT when the "
                   "project's similarity is neural).")

JOBS: dict[str, Work] = {
    "train-aligner": Work(_task("train_aligner"), "annotation.services.training.versions.run_training_job", Queue.GPU,
                          "Retrain the aligner (pair model + CRF) on the project's annotations."),
    "corpus-stats": Work(_task("corpus_stats"), "annotation.services.corpus.corpus_stats.run_stats_job", Queue.CPU,
                         "Count articles, documents and sentences per level."),
    "import": Work(_task("import_corpus"), "annotation.services.corpus.importing.uploads.run_import_job", Queue.CPU,
                   "Import a large uploaded corpus in bounded memory, with progress.",
                   lost="annotation.services.corpus.importing.recovery.job_lost"),
    "access-attributes": Work(_task("access_attributes"), _SCORING, Queue.CPU,
                              "ACCESS control attributes of every pair of a project or run."),
    "sum4simp-filter": Work(_task("sum4simp_filter"), _SCORING, Queue.CPU,
                            "Fit the Sum4Simp filter on a reference corpus, then score pairs."),
    "wivico-thresholds": Work(_task("wivico_thresholds"), _SCORING, Queue.GPU,
                              "Derive WIVICO n:m thresholds from annotated valid pairs (SBERT)."),
    "gain-classifier": Work(_task("gain_classifier"), _SCORING, Queue.GPU,
                            "Train or apply the WIVICO simplicity-gain classifier."),
    "pivot-select": Work(_task("pivot_select"), _SCORING, Queue.CPU,
                         "Pivot-translation BLEU/FRES selectors over every pair."),
    "export": Work(_task("export"), "annotation.services.export.run_export_job", Queue.CPU,
                   "Write a gold or auto export (files, manifest, zip) under MEDIA_ROOT/exports/<id>/."),
    "paragraph-alignment": _PARAGRAPHS,
    "regenerate-candidates": _PARAGRAPHS,
}
"""Job kinds (``Job.kind``) → their work; the service is called as ``service(job_id)``."""

RUN = Work(_task("run_alignment"), "annotation.services.alignment.run_chunks.plan_run", Queue.GPU,
           "Plan an alignment run into chunks and send them (sent to the run's own queue, gpu by default).")
"""An alignment run (``AlignmentRun``); the service is called as ``service(run_id)``."""

RUN_CHUNK = Work(_task("align_chunk"), "annotation.services.alignment.run_chunks.run_chunk", Queue.GPU,
                 "Run one chunk of an alignment run: document pairs aligned and saved, or a mining run's stage "
                 "chunk (sent to the queue its run's executor gives it).")
"""One chunk of an alignment run; the service is called as ``service(run_id, chunk, last_try=...)``."""

REAPER = Work(_task("reap_stale"), "annotation.services.background.liveness.reap_stale", Queue.CPU,
              "Re-queue (or fail) work whose worker was lost.", retry=NO_RETRY)
"""The reaper (Celery beat, when it runs); the service is called with no arguments."""

SWEEPS: tuple[str, ...] = ("annotation.services.corpus.importing.recovery.sweep_stale_files",
                           "annotation.services.alignment.run_chunks.sweep_lost_chunks")
"""Run by every reaper pass after it (``"module.function"``, no arguments): files a dead process left."""


def lost_hook(kind: str) -> Callable[..., object] | None:
    """What undoes the partial writes of a failed lost job of ``kind`` (None: nothing to undo)."""
    work = JOBS.get(kind)
    return _load(work.lost) if work is not None and work.lost else None


def sweeps() -> list[Callable[..., object]]:
    return [_load(dotted) for dotted in SWEEPS]


def job(kind: str) -> Work:
    """The work of a job kind; ValueError naming the known kinds for any other."""
    try:
        return JOBS[kind]
    except KeyError:
        raise ValueError(f"unknown job kind {kind!r}; choose one of: {', '.join(sorted(JOBS))}") from None


def every() -> list[Work]:
    """Every entry, one per task name."""
    entries = [RUN, RUN_CHUNK, *JOBS.values(), REAPER]
    return list({work.task: work for work in entries}.values())


def task_routes() -> dict[str, dict[str, str]]:
    """Celery's ``task_routes``: each task name → its queue (anything else → cpu)."""
    routes = {work.task: {"queue": work.queue.value} for work in every()}
    routes[_task("*")] = {"queue": Queue.CPU.value}
    return routes
