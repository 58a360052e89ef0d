"""Run the whole application on the embedded default: gunicorn serving the app + a Celery worker process.

Ctrl-C or SIGTERM stops both (the worker runs in its own session, so it is stopped explicitly).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = ("Migrate, load the demo, start a Celery worker (both queues) and serve the app with gunicorn on "
            "127.0.0.1:8000; Ctrl-C or SIGTERM stops everything.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--addrport", default="127.0.0.1:8000")
        parser.add_argument("--no-worker", action="store_true", help="don't start the worker process")
        parser.add_argument("--web-workers", type=int, default=2, help="gunicorn worker processes (default 2)")
        parser.add_argument("--runserver", action="store_true",
                            help="Django's development server (auto-reload) instead of gunicorn")

    def handle(self, *args, addrport: str, no_worker: bool, web_workers: int, runserver: bool, **options) -> None:
        call_command("migrate", interactive=False, verbosity=0)
        call_command("demo_setup")
        call_command("collectstatic", interactive=False, verbosity=0)
        processes: list[subprocess.Popen] = []
        previous = signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM stops us like Ctrl-C does
        try:
            if not no_worker:
                worker = start_worker(concurrency=2, log_file=str(settings.VAR_DIR / "worker.log"))
                processes.append(worker)
                self.stdout.write(f"celery worker started (pid {worker.pid}, queues cpu,gpu, log var/worker.log)")
            self.stdout.write(f"open http://{addrport}/ and log in with a demo account above (Ctrl-C stops everything)")
            self.stdout.flush()
            if runserver:
                call_command("runserver", addrport, use_reloader=False, skip_checks=True)
            else:
                web = start_web(addrport, workers=web_workers)
                processes.append(web)
                web.wait()
        except KeyboardInterrupt:
            self.stdout.write("stopping…")
        finally:
            for process in reversed(processes):
                stop_process(process)
            signal.signal(signal.SIGTERM, previous)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def start_web(addrport: str, *, workers: int = 2, env: dict | None = None) -> subprocess.Popen:
    """gunicorn serving ``alignapp.wsgi`` (static files through WhiteNoise), access log on stdout."""
    cmd = [sys.executable, "-m", "gunicorn", "alignapp.wsgi:application", "--bind", addrport,
           "--workers", str(workers), "--threads", "4", "--graceful-timeout", "5", "--access-logfile", "-"]
    return subprocess.Popen(cmd, env={**os.environ, **(env or {})}, cwd=str(settings.BASE_DIR), start_new_session=True)


def start_worker(*, concurrency: int = 1, log_file: str | None = None, env: dict | None = None) -> subprocess.Popen:
    """A ``celery worker`` subprocess consuming both queues (the gpu queue falls back to CPU)."""
    cmd = [sys.executable, "-m", "celery", "-A", "alignapp", "worker", "-Q", "cpu,gpu", "--pool", "threads",
           "--concurrency", str(concurrency), "--without-gossip", "--without-mingle", "--without-heartbeat",
           "--loglevel", "INFO"]
    out = open(log_file, "ab") if log_file else subprocess.DEVNULL  # noqa: SIM115 - lives as long as the worker
    return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
                            cwd=str(settings.BASE_DIR), start_new_session=True)


def stop_process(process: subprocess.Popen) -> None:
    """SIGTERM to the process's group, SIGKILL after 10 s."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=10)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)
