"""Run the whole application on the embedded default: web server + a Celery worker process."""
from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Migrate, load the demo, start a Celery worker (both queues) and the web server on 127.0.0.1:8000."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--addrport", default="127.0.0.1:8000")
        parser.add_argument("--no-worker", action="store_true", help="don't start the worker process")

    def handle(self, *args, addrport: str, no_worker: bool, **options) -> None:
        call_command("migrate", interactive=False, verbosity=0)
        call_command("demo_setup")
        if not no_worker:
            worker = start_worker(concurrency=2, log_file=str(settings.VAR_DIR / "worker.log"))
            atexit.register(stop_process, worker)
            self.stdout.write(f"celery worker started (pid {worker.pid}, queues cpu,gpu, log var/worker.log)")
        self.stdout.write(f"open http://{addrport}/ and log in with a demo account above (Ctrl-C stops everything)")
        call_command("runserver", addrport, use_reloader=False, skip_checks=True)


def start_worker(*, concurrency: int = 1, log_file: str | None = None, env: dict | None = None) -> subprocess.Popen:
    """A ``celery worker`` subprocess consuming both queues (the gpu queue falls back to CPU)."""
    cmd = [sys.executable, "-m", "celery", "-A", "alignapp", "worker", "-Q", "cpu,gpu", "--pool", "threads",
           "--concurrency", str(concurrency), "--without-gossip", "--without-mingle", "--without-heartbeat",
           "--loglevel", "INFO"]
    out = open(log_file, "ab") if log_file else subprocess.DEVNULL  # noqa: SIM115 - lives as long as the worker
    return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
                            cwd=str(settings.BASE_DIR), start_new_session=True)


def stop_process(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
