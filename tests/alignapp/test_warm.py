"""A web process loads the URL configuration and the aligners' registry while it boots (issue 37: the first
project page of a fresh worker took seconds importing them); ``WARM_START=0`` leaves them to the first request."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = ("import sys, alignapp.wsgi; "
         "print('views' if 'annotation.views.pages' in sys.modules else '-', "
         "'methods' if 'workers.engine.methods.crf' in sys.modules else '-')")


def boot(**env: str) -> str:
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})
    assert done.returncode == 0, done.stderr
    return done.stdout.split("\n")[-2]


def test_the_wsgi_application_loads_urls_and_methods_before_the_first_request():
    assert boot() == "views methods"


def test_warm_start_can_be_turned_off():
    assert boot(WARM_START="0") == "- -"
