"""A real Celery worker process for integration tests, on a chosen broker."""
from __future__ import annotations

import contextlib
import time
from pathlib import Path

import pytest


def database_url() -> str:
    """URL of the (test) database this process uses, for the worker subprocess."""
    from django.db import connection

    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    return f"postgres://{s['USER']}:{s['PASSWORD']}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@contextlib.contextmanager
def app_broker(url: str, folder: Path | None = None):
    """Point this process's Celery app at ``url`` (and the filesystem broker folder) for a test."""
    from alignapp.celery import app

    old = (app.conf.broker_url, app.conf.broker_transport_options)
    options = {"visibility_timeout": 3600}
    if folder is not None:
        for sub in ("out", "processed", "control"):
            (folder / sub).mkdir(parents=True, exist_ok=True)
        options = {"data_folder_in": str(folder / "out"), "data_folder_out": str(folder / "out"),
                   "processed_folder": str(folder / "processed"), "store_processed": False,
                   "control_folder": str(folder / "control")}  # kombu's default is ./control (the repo)
    app.conf.broker_url, app.conf.broker_transport_options = url, options
    app._pool = None
    app.amqp._producer_pool = None
    try:
        yield app
    finally:
        app.conf.broker_url, app.conf.broker_transport_options = old
        app._pool = None
        app.amqp._producer_pool = None


@contextlib.contextmanager
def running_worker(broker_url: str, tmp_path: Path, folder: Path | None = None, timeout: float = 90.0,
                   env: dict[str, str] | None = None):
    """Start ``celery worker -Q cpu,gpu`` against the test database and wait until it is ready
    (``env``: more environment for it, e.g. short liveness settings)."""
    from annotation.management.commands.run_demo import start_worker

    log = tmp_path / "worker.log"
    env = {"DATABASE_URL": database_url(), "CELERY_BROKER_URL": broker_url, "HF_HUB_OFFLINE": "1", **(env or {})}
    if folder is not None:
        env["CELERY_BROKER_DIR"] = str(folder)
    worker = start_worker(concurrency=1, log_file=str(log), env=env)
    try:
        deadline = time.monotonic() + timeout
        while "ready." not in (log.read_text(errors="replace") if log.exists() else ""):
            if worker.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"worker did not start:\n{log.read_text(errors='replace') if log.exists() else ''}")
            time.sleep(0.3)
        yield worker, log
    finally:
        kill_process(worker)


def kill_process(process) -> None:
    """SIGKILL a test's worker and its children. A warm (or cold) Celery shutdown on the filesystem broker
    waits out the sync loop's 2-s drain cycles, about 4 s a worker; once a test has what it checks, how
    its worker stops tells nothing (``test_run_demo`` checks the graceful stop)."""
    import os
    import signal

    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def wait_for(predicate, timeout: float, log: Path | None = None, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    detail = log.read_text(errors="replace")[-4000:] if log and log.exists() else ""
    pytest.fail(f"timed out waiting for {what}\n{detail}")


def running_web(port: int, log: Path, *, workers: int, env: dict[str, str] | None = None, args: tuple[str, ...] = ()):
    """gunicorn with ``workers`` processes on the test database, as in production (``env`` added to the
    environment, ``args`` to the command line); returns once ``/healthz`` answers."""
    import os
    import subprocess
    import sys

    import requests
    from django.conf import settings

    full = {**os.environ, "DATABASE_URL": database_url(), "LOG_LEVEL": "WARNING", **(env or {})}
    gunicorn = Path(sys.executable).with_name("gunicorn")
    server = subprocess.Popen([str(gunicorn), "alignapp.wsgi:application", "--bind", f"127.0.0.1:{port}",
                               "--workers", str(workers), *args],
                              cwd=settings.BASE_DIR, env=full, stdout=log.open("ab"), stderr=subprocess.STDOUT,
                              start_new_session=True)

    def up() -> bool:
        try:
            return requests.get(f"http://127.0.0.1:{port}/healthz", timeout=1).ok
        except requests.RequestException:
            return server.poll() is not None  # died: wait_for ends, the check below says so

    wait_for(up, 60, log, "the web server")
    assert server.poll() is None, log.read_text()[-3000:]
    return server


@pytest.fixture
def embedded_worker(transactional_db, tmp_path):
    """A worker on kombu's filesystem transport (the embedded default), app pointed at it too."""
    folder = tmp_path / "broker"
    with app_broker("filesystem://", folder), running_worker("filesystem://", tmp_path, folder) as (worker, log):
        yield log


@pytest.fixture
def redis_worker(transactional_db, redis_url, tmp_path):
    import redis

    redis.Redis.from_url(redis_url).flushdb()
    with app_broker(redis_url), running_worker(redis_url, tmp_path) as (worker, log):
        yield log


