"""What a web process loads once at start instead of in its first requests (issue 37: pages cold).

A fresh gunicorn worker used to pay, in the first request that needed them, for the URL configuration
(every view module, ~3 s on the loaded 2-core machine) and for the engine's method registry (the project,
run and models pages list the aligners: importing them imports torch, ~5 s). :func:`warm_up` does both
while the worker boots (``alignapp/wsgi.py``), before it takes a request; ``WARM_START=0`` turns it off
(e.g. a short-lived management process that imports the WSGI module).
"""
from __future__ import annotations

import logging

from alignapp.env import env_bool

log = logging.getLogger(__name__)


def warm_up() -> list[str]:
    """Load the URL configuration and the aligners' registry now; returns what it loaded. A failure is
    logged and left to the first request that needs the part (it then shows the error as it always did)."""
    if not env_bool("WARM_START", True):
        return []
    done = []
    try:
        from django.urls import get_resolver

        get_resolver().url_patterns  # noqa: B018 - imports every view module
        done.append("urls")
        from annotation.services.alignment import run_options

        run_options.available_methods()
        done.append("methods")
    except Exception:  # noqa: BLE001 - a warm-up must never keep the server from starting
        log.exception("warm-up stopped; the first request will load the rest")
    freeze_startup_objects()
    done.append("gc-freeze")
    return done


def freeze_startup_objects() -> None:
    """Move everything loaded so far (Django, every view module, torch and the aligners) out of the
    garbage collector's reach: it lives as long as the process. Python's full collections walked all of
    it while every thread of the worker waited: 150–250 ms at a time, during which the queue's
    annotators' submits queued (issue 37, 200 annotators at 1M pairs). ``gc.freeze`` keeps them out
    of later collections (what Instagram's Django servers do)."""
    import gc

    gc.collect()
    gc.freeze()
