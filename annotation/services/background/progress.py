"""Recording status, progress and liveness of background work in its database row.

Ownership: :func:`claim` moves a row to RUNNING for this process, stamps ``worker`` (host:pid) and
``heartbeat_at`` and counts the attempt. Until the task ends (:func:`release`) a daemon thread
stamps ``heartbeat_at`` every ``WORKER_HEARTBEAT_SECONDS``, so a long single step (a model load, a
training epoch) is not mistaken for a dead worker. A row whose heartbeat is older than
``WORKER_STALE_SECONDS`` lost its worker: a new claim takes it over (a re-delivered message), or
:mod:`~annotation.services.background.liveness` re-queues it. The attempt that lost the row is no
longer its owner: :func:`check_cancelled` raises :class:`Superseded`, and :func:`succeed`,
:func:`fail`, the reporter and :func:`save_checkpoint` write nothing for it.
"""
from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import F, Model, Q, QuerySet
from django.utils import timezone

from annotation.models import Job, Status
from annotation.services import audit
from annotation.services.background.registry import TRANSIENT

logger = logging.getLogger(__name__)


def worker_name() -> str:
    """``host:pid`` of this process, stored on the work it runs."""
    return f"{socket.gethostname()}:{os.getpid()}"[:200]


def stale_before(now: datetime | None = None) -> datetime:
    """Heartbeats older than this belong to a lost worker."""
    return (now or timezone.now()) - timedelta(seconds=settings.WORKER_STALE_SECONDS)


def lost(now: datetime | None = None) -> Q:
    """RUNNING rows whose worker stopped stamping its heartbeat (rows started before heartbeats
    existed count from ``started_at``; a row with neither was never claimed by a worker)."""
    cutoff = stale_before(now)
    silent = Q(heartbeat_at__lt=cutoff) | (Q(heartbeat_at__isnull=True) & Q(started_at__lt=cutoff))
    return Q(status=Status.RUNNING) & silent


@dataclass
class _Claim:
    attempt: int | None  # None: keep a row alive without owning it (a run, from one of its chunks)
    stop: threading.Event = field(default_factory=threading.Event)


_claims: dict[tuple[str, int], _Claim] = {}
_claims_lock = threading.Lock()


def _key(model: type[Model], pk: int) -> tuple[str, int]:
    return (model._meta.label, int(pk))


def _mine(model: type[Model], pk: int) -> _Claim | None:
    with _claims_lock:
        return _claims.get(_key(model, pk))


def _owned(model: type[Model], pk: int) -> QuerySet:
    """The row if this process may still write it: its own attempt while RUNNING; without a claim
    here (a service called directly, a run kept alive by its chunk) any row that was not cancelled."""
    mine = _mine(model, pk)
    if mine is None:
        return model.objects.filter(pk=pk).exclude(status=Status.CANCELLED)
    return model.objects.filter(pk=pk, status=Status.RUNNING, attempts=mine.attempt)


def claim(model: type[Model], pk: int) -> bool:
    """Move a queued row — or a RUNNING one whose worker was lost — to RUNNING for this process and
    start its heartbeat. False when it finished, was cancelled, or a live worker is on it.

    The conditional UPDATE is the idempotency guard: a duplicate delivery of the same task (a Redis
    re-delivery, a re-queue racing the original message) finds the row finished, or running with
    a live heartbeat, and does nothing."""
    now = timezone.now()
    updated = model.objects.filter(Q(pk=pk) & (Q(status=Status.QUEUED) | lost(now))).update(
        status=Status.RUNNING, started_at=now, error="", message="started", heartbeat_at=now,
        worker=worker_name(), attempts=F("attempts") + 1)
    if not updated:
        return False
    attempt = model.objects.filter(pk=pk).values_list("attempts", flat=True).first() or 0
    _start_beating(model, pk, _Claim(attempt))
    return True


def release(model: type[Model], pk: int) -> None:
    """This process is done with the row (its task returned or raised): stop the heartbeat."""
    with _claims_lock:
        mine = _claims.pop(_key(model, pk), None)
    if mine is not None:
        mine.stop.set()


@contextlib.contextmanager
def heartbeat(model: type[Model], pk: int) -> Iterator[None]:
    """Keep a RUNNING row's heartbeat fresh while the block runs, without owning the row (a chunk
    of a run keeps the run alive: many workers run its chunks, none claims the run)."""
    model.objects.filter(pk=pk, status=Status.RUNNING).update(heartbeat_at=timezone.now())
    beat = _Claim(None)
    _start_beating(model, pk, beat)
    try:
        yield
    finally:
        beat.stop.set()


def _start_beating(model: type[Model], pk: int, mine: _Claim) -> None:
    if mine.attempt is not None:  # owned: what check_cancelled, succeed and fail go by
        with _claims_lock:
            old = _claims.pop(_key(model, pk), None)
            _claims[_key(model, pk)] = mine
        if old is not None:
            old.stop.set()
    threading.Thread(target=_beat, args=(model, pk, mine), daemon=True,
                     name=f"heartbeat-{model.__name__}-{pk}").start()


def _beat(model: type[Model], pk: int, mine: _Claim) -> None:
    """Stamp ``heartbeat_at`` until stopped, or until the row is no longer RUNNING for us."""
    from django.db import connection

    try:
        while not mine.stop.wait(settings.WORKER_HEARTBEAT_SECONDS):
            rows = model.objects.filter(pk=pk, status=Status.RUNNING)
            if mine.attempt is not None:
                rows = rows.filter(attempts=mine.attempt)
            try:
                if not rows.update(heartbeat_at=timezone.now()):
                    return  # finished, cancelled or taken over: nothing of ours to keep alive
            except DatabaseError as exc:  # the database went away for a moment: try again next beat
                logger.warning("heartbeat of %s #%s not stored: %s", model.__name__, pk, exc)
                connection.close()
    except Exception:  # noqa: BLE001 - a daemon thread logs what stopped it instead of dying silently
        logger.exception("heartbeat of %s #%s stopped", model.__name__, pk)
    finally:
        connection.close()


#: Callbacks ``(model, pk, fraction, message)`` told of every report in this process (see :func:`observed`).
_observers: list[Callable[[type[Model], int, float, str], None]] = []


@contextlib.contextmanager
def observed(callback: Callable[[type[Model], int, float, str], None]) -> Iterator[None]:
    """While the block runs, also tell ``callback(model, pk, fraction, message)`` of every progress
    report made in this process, unthrottled (a management command's progress bar over work it runs
    in-process). What is written to the rows does not change."""
    _observers.append(callback)
    try:
        yield
    finally:
        _observers.remove(callback)


def reporter(model: type[Model], pk: int, *, every_seconds: float = 0.5) -> Callable[[float, str], None]:
    """A ``progress(fraction, message)`` callback that writes at most every ``every_seconds`` (and
    stamps the heartbeat of a row this process claimed); :func:`observed` callbacks hear each call."""
    last = [0.0]

    def report(fraction: float, message: str = "") -> None:
        for observer in tuple(_observers):
            observer(model, pk, fraction, message)
        now = time.monotonic()
        if now - last[0] < every_seconds and fraction < 1.0:
            return
        last[0] = now
        fields = {"progress": round(100.0 * max(0.0, min(1.0, fraction)), 1), "message": message[:500]}
        if _mine(model, pk) is None:
            model.objects.filter(pk=pk).update(**fields)
        else:
            _owned(model, pk).update(**fields, heartbeat_at=timezone.now())

    return report


def save_checkpoint(model: type[Model], pk: int, values: dict, **fields: object) -> bool:
    """Merge ``values`` into the row's ``checkpoint`` (what a resumed attempt may skip) and write
    ``fields`` with it; False when the row is no longer this attempt's (nothing written)."""
    checkpoint = model.objects.filter(pk=pk).values_list("checkpoint", flat=True).first()
    if checkpoint is None and not model.objects.filter(pk=pk).exists():
        return False
    return bool(_owned(model, pk).update(checkpoint={**(checkpoint or {}), **values}, heartbeat_at=timezone.now(), **fields))


class Cancelled(Exception):
    """The row was cancelled while its work ran: stop, write nothing more."""


class Superseded(Cancelled):
    """This attempt lost the row: its worker was thought lost and the work was re-queued or taken
    over. Stop; the attempt that owns it now writes the result."""


def cancel(model: type[Model], pk: int, *, user=None) -> bool:
    """Cancel queued or running work (the worker stops at its next check); False if it had finished.
    ``user`` (who cancelled) goes to the audit log."""
    with transaction.atomic():
        cancelled = bool(model.objects.filter(pk=pk, status__in=[Status.QUEUED, Status.RUNNING]).update(
            status=Status.CANCELLED, finished_at=timezone.now(), message="cancelled"))
        if cancelled:
            audit.record_cancel(model, pk, user)
    return cancelled


def check_cancelled(model: type[Model], pk: int) -> None:
    """Raise :class:`Cancelled` when someone cancelled (or deleted) the row, :class:`Superseded` when
    this process's attempt lost it (call it between steps of long work)."""
    row = model.objects.filter(pk=pk).values_list("status", "attempts").first()
    mine = _mine(model, pk)
    if row is None or row[0] == Status.CANCELLED:
        release(model, pk)
        raise Cancelled(f"{model.__name__} #{pk} was {'deleted' if row is None else 'cancelled'}")
    if mine is not None and (row[0] != Status.RUNNING or row[1] != mine.attempt):
        mine.stop.set()  # no more heartbeats; the claim stays, so every later check says the same
        raise Superseded(f"{model.__name__} #{pk}: attempt {mine.attempt} lost it (now {row[0]}, attempt {row[1]})")


def should_stop(model: type[Model], pk: int) -> bool:
    """:func:`check_cancelled` as a yes/no (for engine callbacks such as training's ``should_stop``)."""
    try:
        check_cancelled(model, pk)
    except Cancelled:
        return True
    return False


def interrupted(model: type[Model], pk: int, exc: BaseException) -> bool:
    """After a transient error (the database connection dropped, the broker away): leave the work
    RUNNING but lost at once, so the task's automatic retry — or, when retries run out, the reaper
    once the database is back — takes it over and resumes it from its checkpoint. False for any
    other error (the caller stores it with :func:`fail`)."""
    from django.db import connection

    if not isinstance(exc, TRANSIENT):
        return False
    try:
        if not connection.in_atomic_block:
            connection.close_if_unusable_or_obsolete()  # a dropped connection: the next query reconnects
        _owned(model, pk).update(heartbeat_at=stale_before() - timedelta(seconds=1),
                                 message=f"interrupted, resumes on retry: {exc}"[:500])
    except DatabaseError as still:  # still no database: the heartbeat goes stale by itself
        logger.warning("could not mark %s #%s interrupted: %s", model.__name__, pk, still)
    release(model, pk)
    return True


def succeed(model: type[Model], pk: int, *, result: dict | None = None, timings: dict | None = None, **fields) -> None:
    _owned(model, pk).update(
        status=Status.SUCCEEDED, progress=100.0, message="done", finished_at=timezone.now(),
        result=result or {}, timings=timings or {}, **fields,
    )
    release(model, pk)


def fail(model: type[Model], pk: int, exc: BaseException, **fields) -> None:
    """Store the error as data so the UI and API can show it (and a retry can be offered). ``fields``
    (a job's ``result`` with its problems, a ``message``) are written in the same UPDATE: a reader that
    sees the row failed sees them too."""
    _owned(model, pk).update(**{"status": Status.FAILED, "finished_at": timezone.now(),
                                "error": error_text(exc)[:5000], "message": "failed", **fields})
    release(model, pk)


def run_job(job_id: int, work: Callable[[Job], dict]) -> None:
    """The shape of a short job: claim the row (a duplicate delivery does nothing), ``work(job)`` with the job's
    project and scheme loaded, its result stored on success; an error recorded on the row, then re-raised."""
    if not claim(Job, job_id):
        return
    try:
        result = work(Job.objects.select_related("project__label_scheme").get(pk=job_id))
    except Exception as exc:  # noqa: BLE001 - recorded on the row, then re-raised for the log
        fail(Job, job_id, exc)
        raise
    succeed(Job, job_id, result=result)


def error_text(exc: BaseException) -> str:
    """What a failed row stores: the app's own errors as their message (written for the people who
    read it: ``bad.jsonl:2: not valid JSON``), any other as ``ClassName: message`` — never a module
    path of the server's code (``annotation.services....CorpusImportError:``)."""
    from django.core.exceptions import ObjectDoesNotExist

    kind, message = type(exc), str(exc).strip()
    own = kind.__module__.split(".")[0] in ("annotation", "workers") and not isinstance(exc, ObjectDoesNotExist)
    if own and message:
        return message
    return f"{kind.__qualname__}: {message}" if message else kind.__qualname__
