"""A web process loads the URL configuration and the aligners' registry while it boots (issue 37: the first
project page of a fresh worker took seconds importing them); ``WARM_START=0`` leaves them to the first request."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = ("import gc, sys, alignapp.wsgi; "
         "print('views' if 'annotation.views.pages' in sys.modules else '-', "
         "'methods' if 'workers.engine.methods.crf' in sys.modules else '-', "
         "'frozen' if gc.get_freeze_count() > 100_000 else '-')")


def boot(**env: str) -> str:
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})
    assert done.returncode == 0, done.stderr
    return done.stdout.split("\n")[-2]


def test_the_wsgi_application_loads_urls_and_methods_before_the_first_request():
    """...and then moves what it loaded out of the garbage collector's reach (``gc.freeze``): full collections had
    walked it all, 150–250 ms each with every thread of the worker waiting."""
    assert boot() == "views methods frozen"


def test_warm_start_can_be_turned_off():
    assert boot(WARM_START="0") == "- - -"
