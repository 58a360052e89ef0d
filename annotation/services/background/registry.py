"""The one table of background work: each job kind — and alignment runs (mining runs too), their chunks
and the reaper — with its Celery task name, its service function, its queue and its retry rule.

Everything else reads this table: ``workers/tasks.py`` registers one thin task per task name,
``alignapp/celery.py`` routes by it, and services send work by task name through
:mod:`~annotation.services.background.dispatch`, so the web process never imports the worker's modules.
**Adding a job kind** is one module in ``annotation/job_kinds/`` that calls :func:`register_job` (its task
name, service, queue and retry rule) plus its service function ``run(job_id)``, which records progress and
outcome on the ``Job`` row (:mod:`~annotation.services.background.progress`). A scoring kind's job comes
from its declaration (``annotation/services/scoring/kinds/``): no entry by hand.

Service functions are dotted-path strings, imported when the task runs: this module imports no
area above ``background`` (nor Django's models, so the Celery app can read it while it configures).
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from django.db import InterfaceError, OperationalError

from annotation.plugins import Registry


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
    one_core: bool = False  # a big project's figures: no parallel PostgreSQL workers (background/one_core.py)

    def function(self) -> Callable[..., object]:
        """The service function (imported now)."""
        return _load(self.service)


def _load(dotted: str) -> Callable[..., object]:
    module, name = dotted.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def task_name(name: str) -> str:
    """The full Celery task name of a task of ``workers.tasks`` (a job kind's module names its task so)."""
    return f"workers.tasks.{name}"


_task = task_name


_JOBS: Registry[Work] = Registry("job kind", "annotation.job_kinds")
"""Job kinds (``Job.kind``) → their work; the service is called as ``service(job_id)``. Each job kind is
one module of ``annotation/job_kinds/`` that calls :func:`register_job` (the scoring kinds' module makes
one per registered scoring kind)."""


def register_job(kind: str, work: Work) -> Work:
    """Add the work of job kind ``kind`` (a module of ``annotation/job_kinds/`` calls it)."""
    _JOBS.add(kind, work)
    return work


def unregister_job(kind: str) -> None:
    """Forget job kind ``kind`` (tests that register a kind of their own)."""
    _JOBS.remove(kind)


def jobs() -> list[tuple[str, Work]]:
    """``(job kind, work)`` of every job kind, by kind."""
    return _JOBS.items()


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
    work = _JOBS.get(kind) if kind in _JOBS else None
    return _load(work.lost) if work is not None and work.lost else None


def sweeps() -> list[Callable[..., object]]:
    return [_load(dotted) for dotted in SWEEPS]


job: Callable[[str], Work] = _JOBS.get
"""``job(kind)``: the work of a job kind; :class:`~annotation.plugins.UnknownName` (a ValueError) naming the known
kinds for any other. The registry's own ``get``, not a wrapper around it: one look-up, one frame."""


def every() -> list[Work]:
    """Every entry, one per task name."""
    entries = [RUN, RUN_CHUNK, *_JOBS.entries(), REAPER]
    return list({work.task: work for work in entries}.values())


def route(name: str, *args: object, **kwargs: object) -> dict[str, str] | None:
    """Celery's router: a task's queue by its name (anything else of ``workers.tasks`` → cpu). A function, not
    a table, so that the job kinds' modules load when the first task is routed, not while Celery configures."""
    if not name.startswith(_task("")):
        return None
    queues = {work.task: work.queue.value for work in every()}
    return {"queue": queues.get(name, Queue.CPU.value)}


def task_routes() -> tuple[Callable[..., dict[str, str] | None]]:
    """Celery's ``task_routes``: :func:`route`."""
    return (route,)
