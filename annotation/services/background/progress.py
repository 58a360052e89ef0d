"""Recording status and progress of background work in its database row."""
from __future__ import annotations

import time
import traceback
from collections.abc import Callable

from django.db import transaction
from django.db.models import Model
from django.utils import timezone

from annotation.models import Status
from annotation.services import audit


def claim(model: type[Model], pk: int) -> bool:
    """Move a queued (or re-delivered) row to RUNNING. False if it already finished.

    The conditional UPDATE makes a duplicate delivery of the same task harmless: a succeeded row
    is never redone; a row left RUNNING by a crashed worker is taken over (acks_late re-delivery).
    """
    updated = model.objects.filter(pk=pk, status__in=[Status.QUEUED, Status.RUNNING]).update(
        status=Status.RUNNING, started_at=timezone.now(), error="", message="started"
    )
    if updated:
        row = model.objects.get(pk=pk)
        row.attempts += 1
        row.save(update_fields=["attempts"])
    return bool(updated)


def reporter(model: type[Model], pk: int, *, every_seconds: float = 0.5) -> Callable[[float, str], None]:
    """A ``progress(fraction, message)`` callback that writes at most every ``every_seconds``."""
    last = [0.0]

    def report(fraction: float, message: str = "") -> None:
        now = time.monotonic()
        if now - last[0] < every_seconds and fraction < 1.0:
            return
        last[0] = now
        model.objects.filter(pk=pk).update(progress=round(100.0 * max(0.0, min(1.0, fraction)), 1), message=message[:500])

    return report


class Cancelled(Exception):
    """The row was cancelled while its work ran: stop, write nothing more."""


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
    """Raise :class:`Cancelled` when someone cancelled the row (call it between steps of long work)."""
    if model.objects.filter(pk=pk, status=Status.CANCELLED).exists():
        raise Cancelled(f"{model.__name__} #{pk} was cancelled")


def succeed(model: type[Model], pk: int, *, result: dict | None = None, timings: dict | None = None, **fields) -> None:
    model.objects.filter(pk=pk).exclude(status=Status.CANCELLED).update(
        status=Status.SUCCEEDED, progress=100.0, message="done", finished_at=timezone.now(),
        result=result or {}, timings=timings or {}, **fields,
    )


def fail(model: type[Model], pk: int, exc: BaseException) -> None:
    """Store the error as data so the UI and API can show it (and a retry can be offered)."""
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    model.objects.filter(pk=pk).exclude(status=Status.CANCELLED).update(
        status=Status.FAILED, finished_at=timezone.now(), error=detail[:5000], message="failed"
    )
