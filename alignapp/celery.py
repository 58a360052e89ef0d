"""The Celery app: two queues (``cpu``, ``gpu``), tasks routed by name as the registry of background
work says (``annotation/services/background/registry.py``).

Broker: ``CELERY_BROKER_URL`` (Redis in production); with none configured, kombu's filesystem
transport with every folder (messages, processed, control) under ``var/broker`` so the embedded default needs no server.

Lost workers: every worker re-queues work whose worker stopped stamping its heartbeat — once when it
is ready and every ``WORKER_STALE_SECONDS / 4`` after (:class:`Reaper`), so no beat is needed on the
filesystem broker; with ``celery beat`` running, ``workers.tasks.reap_stale`` runs as well.
"""
from __future__ import annotations

import logging
import os

from celery import Celery, bootsteps
from celery.signals import worker_ready
from kombu.transport import TRANSPORT_ALIASES

# filesystem:// messages are published atomically (alignapp/broker.py): kombu's own transport lets a
# polling worker take a half-written message file and stop
TRANSPORT_ALIASES["filesystem"] = "alignapp.broker:Transport"

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "alignapp.settings")

app = Celery("alignapp")


def celery_settings() -> dict[str, object]:
    """The app's Celery configuration, read from Django settings when Celery first needs it."""
    from django.conf import settings

    from annotation.services.background.registry import REAPER, Queue, task_routes

    broker = settings.CELERY_BROKER_URL
    transport_options: dict[str, object] = {"visibility_timeout": settings.CELERY_VISIBILITY_TIMEOUT}
    if broker.startswith("filesystem"):
        folder = settings.CELERY_BROKER_DIR
        for sub in ("out", "processed", "control"):
            (folder / sub).mkdir(parents=True, exist_ok=True)
        transport_options = {
            "data_folder_in": str(folder / "out"),
            "data_folder_out": str(folder / "out"),
            "processed_folder": str(folder / "processed"),
            "control_folder": str(folder / "control"),  # exchange tables; kombu's default is ./control
            "store_processed": False,
            "polling_interval": settings.CELERY_BROKER_POLL_MS / 1000,
        }
    return dict(
        broker_url=broker,
        broker_transport_options=transport_options,
        broker_connection_retry_on_startup=True,
        result_backend=None,
        task_ignore_result=True,
        task_default_queue=Queue.CPU.value,
        task_routes=task_routes(),
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        # through a broker outage running work goes on: its state is in the database and the claim
        # drops a re-delivered copy (Celery 6 will cancel such tasks by default)
        worker_cancel_long_running_tasks_on_connection_loss=False,
        worker_prefetch_multiplier=1,
        task_time_limit=settings.CELERY_TASK_TIME_LIMIT,
        task_soft_time_limit=settings.CELERY_TASK_SOFT_TIME_LIMIT,
        task_serializer="json",
        accept_content=["json"],
        beat_schedule={"reap-stale-work": {"task": REAPER.task,
                                           "schedule": max(1.0, settings.WORKER_STALE_SECONDS / 4)}},
    )


def _configure(app: Celery) -> None:
    app.conf.update(celery_settings())


# Lazy defaults, not an ``on_configure`` handler: that signal fires while ``app.conf`` is being
# built, so touching ``app.conf`` inside it recursed until Python's limit in any process whose
# first Celery call was sending a task (the web process, a benchmark).
app.add_defaults(celery_settings)


logger = logging.getLogger(__name__)


def reap_now() -> None:
    """One reaping pass in the worker's main process (errors logged: the next pass tries again).

    The reaper is the registry's ``REAPER`` service, loaded by its name: this module sits at the top (the
    services' dispatcher sends through ``app``), so it imports no service that would import it back."""
    from django.db import DatabaseError, connection

    from annotation.services.background.registry import REAPER

    try:
        reaped = REAPER.function()()
        if reaped.requeued or reaped.failed:
            logger.warning("lost workers: re-queued %s, failed %s", reaped.requeued or "nothing", reaped.failed or "nothing")
    except DatabaseError:
        logger.exception("reaping stale work failed")
    finally:
        connection.close()  # the main process keeps no connection a forked pool child could inherit


class Reaper(bootsteps.StartStopStep):
    """Re-queue lost work every ``WORKER_STALE_SECONDS / 4`` on the worker's timer."""

    requires = {"celery.worker.components:Timer"}

    def __init__(self, worker, **kwargs) -> None:
        super().__init__(worker, **kwargs)
        self.tref = None

    def start(self, worker) -> None:
        from django.conf import settings

        self.tref = worker.timer.call_repeatedly(max(1.0, settings.WORKER_STALE_SECONDS / 4), reap_now)

    def stop(self, worker) -> None:
        if self.tref is not None:
            self.tref.cancel()


app.steps["worker"].add(Reaper)


@worker_ready.connect
def _reap_at_start(**_: object) -> None:
    reap_now()


app.autodiscover_tasks(["workers"])
