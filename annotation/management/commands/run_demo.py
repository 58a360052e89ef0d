"""Run the whole application on the embedded default: gunicorn serving the app + a Celery worker process.

Ctrl-C or SIGTERM stops both (each runs in its own session, so it is stopped explicitly). Nothing outlives
the command (issue 36 item 15: its gunicorn master and worker kept answering after it ended):

* the signals are held while a child starts and is recorded, and ignored while the children are being
  stopped, so a SIGTERM at a bad moment (or a second one during the shutdown) cannot skip a child;
* on Linux each child asks the kernel for SIGTERM when the command's process ends, however it ends
  (``PR_SET_PDEATHSIG``: a SIGKILL, a crash, the out-of-memory killer), so neither is orphaned.
"""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
from collections.abc import Iterator

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
                with _signals_held():  # started and recorded, or neither
                    worker = start_worker(concurrency=2, log_file=str(settings.VAR_DIR / "worker.log"),
                                          die_with_parent=True)
                    processes.append(worker)
                self.stdout.write(f"celery worker started (pid {worker.pid}, queues cpu,gpu, log var/worker.log)")
            self.stdout.write(f"open http://{addrport}/ and log in with a demo account above (Ctrl-C stops everything)")
            self.stdout.flush()
            if runserver:
                call_command("runserver", addrport, use_reloader=False, skip_checks=True)
            else:
                with _signals_held():
                    web = start_web(addrport, workers=web_workers, die_with_parent=True)
                    processes.append(web)
                web.wait()
        except KeyboardInterrupt:
            self.stdout.write("stopping…")
        finally:
            stopping = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGTERM, signal.SIGINT)}
            try:
                for process in reversed(processes):
                    stop_process(process)
            finally:
                for sig, handler in stopping.items():
                    signal.signal(sig, handler)
                signal.signal(signal.SIGTERM, previous)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGTERM and SIGINT wait (blocked, then delivered) until the block ends."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


PR_SET_PDEATHSIG = 1
HELD = {signal.SIGTERM, signal.SIGINT}


def _child_setup(parent: int):
    """What the child runs before its program: unblock the signals :func:`_signals_held` holds (a child
    inherits the mask) and ask for SIGTERM when ``parent`` ends (Linux ``prctl``; elsewhere nothing),
    ending at once if it is gone already. libc is loaded here, in the parent: the child only calls it."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        prctl = None

    def setup() -> None:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD)
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
            if os.getppid() != parent:  # the parent died before prctl
                os._exit(1)
    return setup


def start_web(addrport: str, *, workers: int = 2, env: dict | None = None,
              die_with_parent: bool = False) -> subprocess.Popen:
    """gunicorn serving ``alignapp.wsgi`` (static files through WhiteNoise), access log on stdout.
    ``die_with_parent``: it gets SIGTERM when this process ends, however it ends (Linux)."""
    cmd = [sys.executable, "-m", "gunicorn", "alignapp.wsgi:application", "--bind", addrport,
           "--workers", str(workers), "--threads", "4", "--graceful-timeout", "5", "--access-logfile", "-"]
    return subprocess.Popen(cmd, env={**os.environ, **(env or {})}, cwd=str(settings.BASE_DIR), start_new_session=True,
                            preexec_fn=_child_setup(os.getpid()) if die_with_parent else None)


def start_worker(*, concurrency: int = 1, log_file: str | None = None, env: dict | None = None,
                 die_with_parent: bool = False) -> subprocess.Popen:
    """A ``celery worker`` subprocess consuming both queues (the gpu queue falls back to CPU);
    ``die_with_parent`` as for :func:`start_web`."""
    cmd = [sys.executable, "-m", "celery", "-A", "alignapp", "worker", "-Q", "cpu,gpu", "--pool", "threads",
           "--concurrency", str(concurrency), "--without-gossip", "--without-mingle", "--without-heartbeat",
           "--loglevel", "INFO"]
    out = open(log_file, "ab") if log_file else subprocess.DEVNULL  # noqa: SIM115 - lives as long as the worker
    return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
                            cwd=str(settings.BASE_DIR), start_new_session=True,
                            preexec_fn=_child_setup(os.getpid()) if die_with_parent else None)


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
