"""The Celery app: two queues (``cpu``, ``gpu``), tasks routed by name.

Broker: ``CELERY_BROKER_URL`` (Redis in production); with none configured, kombu's filesystem
transport with every folder (messages, processed, control) under ``var/broker`` so the embedded default needs no server.
"""
from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "alignapp.settings")

app = Celery("alignapp")


def _configure(app: Celery) -> None:
    from django.conf import settings

    from workers.queues import Queue, task_routes

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
        }
    app.conf.update(
        broker_url=broker,
        broker_transport_options=transport_options,
        broker_connection_retry_on_startup=True,
        result_backend=None,
        task_ignore_result=True,
        task_default_queue=Queue.CPU.value,
        task_routes=task_routes(),
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_time_limit=settings.CELERY_TASK_TIME_LIMIT,
        task_soft_time_limit=settings.CELERY_TASK_SOFT_TIME_LIMIT,
        task_serializer="json",
        accept_content=["json"],
    )


@app.on_configure.connect
def _on_configure(sender: Celery, **_: object) -> None:
    _configure(sender)


app.autodiscover_tasks(["workers"])
