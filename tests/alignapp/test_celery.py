"""The embedded broker keeps every folder under var/ (nothing lands in the working tree)."""
from __future__ import annotations

from django.conf import settings

from alignapp.celery import app


def test_every_filesystem_broker_folder_is_under_the_broker_dir():
    options = app.conf.broker_transport_options
    if not settings.CELERY_BROKER_URL.startswith("filesystem"):
        return
    for key in ("data_folder_in", "data_folder_out", "processed_folder", "control_folder"):
        assert options[key].startswith(str(settings.CELERY_BROKER_DIR)), key
