"""Finding work whose worker was lost, and putting it back in the queue (or failing it).

A worker stamps ``heartbeat_at`` on what it runs (:mod:`~annotation.services.background.progress`).
RUNNING work with no heartbeat for ``WORKER_STALE_SECONDS`` lost its worker — killed, out of memory,
its machine gone; on the filesystem broker its message went with it, on Redis it would only come
back after the visibility timeout. :func:`reap_stale` re-queues such work, which then resumes from
its checkpoint; the ``MAX_ATTEMPTS``-th loss in a row fails it with the reason instead (retrying it
by hand starts the count again). A run planned into chunks (mining runs too) is always re-queued: it
resumes from the chunks already done, and a run whose chunks merely wait in a busy queue is not a failure. A job with
``params["resumable"] = False`` (an import run in the web process) is failed at its first loss.
When a job is failed, its kind's ``lost`` hook (``registry``) removes what it had written; each
pass then runs the registry's ``SWEEPS`` (staged import files of dead processes).

Nothing has to run for this: every worker reaps at start-up and every ``WORKER_STALE_SECONDS / 4``
(``alignapp/celery.py``), Celery beat does if it runs, and the run and job pages and lists do when
someone looks (:func:`maybe_reap`, at most once per heartbeat interval per process). Reaping is a
conditional UPDATE, so any number of reapers re-queue a piece of work once.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db import DatabaseError
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from annotation.models import AlignmentRun, Job, Status
from annotation.services import audit
from annotation.services.background import dispatch, progress, registry

logger = logging.getLogger(__name__)


@dataclass
class Reaped:
    """What one pass did: ``"run #3"``/``"job #5"`` per re-queued and per failed piece of work."""

    requeued: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    swept: list[str] = field(default_factory=list)


def is_lost(work: AlignmentRun | Job, now: datetime | None = None) -> bool:
    """RUNNING with no heartbeat for ``WORKER_STALE_SECONDS`` (as loaded; :func:`progress.lost` is
    the same test as a query)."""
    seen = work.heartbeat_at or work.started_at
    return work.status == Status.RUNNING and seen is not None and seen < progress.stale_before(now)


def reap_stale(now: datetime | None = None) -> Reaped:
    """Re-queue (or fail, see the module) every piece of RUNNING work whose worker was lost."""
    now = now or timezone.now()
    reaped = Reaped()
    for model in (AlignmentRun, Job):
        for work in model.objects.filter(progress.lost(now)).select_related("project").order_by("pk"):
            # a run planned into chunks (mining runs too) resumes from them: re-queued, never failed for a loss
            shared = model is AlignmentRun and "chunks" in (work.checkpoint or {})
            _reap(work, now, reaped, may_fail=not shared)
    for sweep in registry.sweeps():
        try:
            reaped.swept.extend(sweep() or [])
        except Exception:  # noqa: BLE001 - a sweep's failure must not stop the reaper; the next pass retries
            logger.exception("sweep %s failed", getattr(sweep, "__name__", sweep))
    return reaped


def _reap(work: AlignmentRun | Job, now: datetime, reaped: Reaped, *, may_fail: bool) -> None:
    model = type(work)
    name = f"{'run' if model is AlignmentRun else 'job'} #{work.pk}"
    losses = int((work.checkpoint or {}).get("lost_workers", 0)) + 1
    seen = work.heartbeat_at or work.started_at
    silence = f"no heartbeat from {work.worker or 'its worker'} for {(now - seen).total_seconds():.0f} s"
    checkpoint = {**(work.checkpoint or {}), "lost_workers": losses}
    # the same attempt, still silent: a claim or another reaper in between makes this a no-op
    mine = model.objects.filter(progress.lost(now), pk=work.pk, attempts=work.attempts)
    resumable = model is not Job or (work.params or {}).get("resumable") is not False
    if may_fail and (losses >= settings.MAX_ATTEMPTS or not resumable):
        error = (f"the worker was lost {losses} times in a row ({silence}; MAX_ATTEMPTS={settings.MAX_ATTEMPTS}); "
                 "retry to run it again from its checkpoint") if resumable else (
                 f"the process running it was lost ({silence}); what it had written was removed: start it again")
        if mine.update(status=Status.FAILED, finished_at=now, message="failed: worker lost", error=error,
                       checkpoint=checkpoint):
            reaped.failed.append(name)
            audit.record("worker.lost", project=work.project, target=name, via="liveness", outcome="failed",
                         worker=work.worker, losses=losses)
            _undo(work)
        return
    if not mine.update(status=Status.QUEUED, message=f"re-queued: {silence}"[:500], checkpoint=checkpoint):
        return
    try:
        _send(work)
    except (BrokerError, OSError) as exc:  # no broker just now: leave it RUNNING (and silent) for the next pass
        logger.warning("could not re-queue %s: %s", name, exc)
        model.objects.filter(pk=work.pk, status=Status.QUEUED, attempts=work.attempts).update(
            status=Status.RUNNING, message=f"lost its worker; re-queueing failed ({exc})"[:500], checkpoint=work.checkpoint)
        return
    reaped.requeued.append(name)
    audit.record("worker.lost", project=work.project, target=name, via="liveness", outcome="re-queued",
                 worker=work.worker, losses=losses)


def _undo(work: AlignmentRun | Job) -> None:
    """A failed lost job's partial writes removed by its kind's hook (a failure is logged: the
    job stays failed, its writes can be removed by hand)."""
    hook = registry.lost_hook(work.kind) if isinstance(work, Job) else None
    if hook is None:
        return
    try:
        hook(work.pk)
    except Exception:  # noqa: BLE001 - logged; the reaper goes on with the other work
        logger.exception("undoing the writes of lost job #%s failed", work.pk)


def _send(work: AlignmentRun | Job) -> None:
    """Publish now, not on commit: a failure to reach the broker must be seen here."""
    dispatch.send_run(work) if isinstance(work, AlignmentRun) else dispatch.send_job(work)


_last_pass = [0.0]
_pass_lock = threading.Lock()


def maybe_reap() -> Reaped | None:
    """:func:`reap_stale` from a page or API request: at most once per ``WORKER_HEARTBEAT_SECONDS``
    per process, and never an error for the request (a failure is logged, the next look retries)."""
    with _pass_lock:
        if time.monotonic() - _last_pass[0] < settings.WORKER_HEARTBEAT_SECONDS:
            return None
        _last_pass[0] = time.monotonic()
    try:
        return reap_stale()
    except DatabaseError:
        logger.exception("reaping stale work failed")
        return None
