"""Per-process isolation when the suite runs on several pytest-xdist workers (``-n 2`` in ``.ci/run``).

Loaded with ``-p tests.parallel`` (pytest.ini) so that it runs before pytest-django imports the settings.
pytest-django already gives each xdist worker its own test database (``test_<name>_gw0``…); this module
gives each its own runtime folder (``var/xdist/gw0``: uploads, broker folders, models, embedding cache)
and its own Redis database, so two workers never clean up, consume or flush each other's files and
messages. Without xdist (``make test`` as is) nothing changes.
"""
from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]


def worker_number(worker_id: str) -> int:
    """``gw3`` → 3."""
    return int(worker_id.removeprefix("gw"))


def redis_url_for(url: str, number: int) -> str:
    """The same server, database ``n - number`` (``redis://h:6379/15`` → ``/14`` for gw1)."""
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    db = base - number if base - number >= 0 else base + number
    return urlunsplit(parts._replace(path=f"/{db}"))


def isolate(worker_id: str, environ: os._Environ | dict) -> None:
    number = worker_number(worker_id)
    var = Path(environ.get("ALIGNAPP_VAR_DIR", str(ROOT / "var")))
    environ["ALIGNAPP_VAR_DIR"] = str(var / "xdist" / worker_id)
    if environ.get("TEST_REDIS_URL"):
        environ["TEST_REDIS_URL"] = redis_url_for(environ["TEST_REDIS_URL"], number)
    # two workers share two cores: one thread each for torch/BLAS instead of two each fighting
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        environ.setdefault(name, "1")


_worker = os.environ.get("PYTEST_XDIST_WORKER")
if _worker:
    isolate(_worker, os.environ)
