"""`make demo` (manage.py run_demo): gunicorn serves the app; SIGTERM stops the web server and the worker."""
from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
def test_sigterm_stops_the_demo_and_its_worker(tmp_path):
    demo, port, log = _start_demo(tmp_path)  # what `make demo` runs with: nothing set
    try:
        text = log.read_text(errors="replace")
        worker_pid = int(re.search(r"celery worker started \(pid (\d+)", text).group(1))
        assert "gunicorn" in text.lower() or "Listening at" in text
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/static/img/favicon.svg", timeout=5) as response:
            assert response.status == 200
        # DEBUG is off: a missing page is the app's 404, not Django's debug page listing settings and URLs
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/no-such-page/", timeout=5)
        body = missing.value.read().decode()
        assert missing.value.code == 404 and "Page not found" in body
        assert "URLconf" not in body and "DEBUG = True" not in body

        demo.send_signal(signal.SIGTERM)
        assert demo.wait(timeout=30) == 0, log.read_text(errors="replace")
        deadline = time.monotonic() + 15
        while _alive(worker_pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(worker_pid), "the worker outlived the demo"
        with pytest.raises(OSError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
    finally:
        if demo.poll() is None:
            demo.kill()


def _start_demo(tmp_path) -> tuple[subprocess.Popen, int, Path]:
    """``run_demo`` on a free port, once ``/healthz`` answers: (process, port, log)."""
    port = _free_port()
    env = {**os.environ, "ALIGNAPP_VAR_DIR": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    for name in ("DATABASE_URL", "DEBUG", "ALIGNAPP_ENV", "CELERY_BROKER_URL"):
        env.pop(name, None)
    log = tmp_path / "demo.log"
    with open(log, "wb") as out:
        demo = subprocess.Popen([sys.executable, "manage.py", "run_demo", "--addrport", f"127.0.0.1:{port}",
                                 "--web-workers", "1"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 180
    while True:
        assert demo.poll() is None, log.read_text(errors="replace")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as response:
                if response.read() == b"ok":
                    return demo, port, log
        except OSError:
            pass
        assert time.monotonic() < deadline, log.read_text(errors="replace")
        time.sleep(0.5)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["two SIGTERMs", "SIGKILL"])
def test_nothing_outlives_the_demo_however_it_ends(tmp_path, how):
    """Issue 36 item 15: after the demo ended, its gunicorn master and Celery worker kept running and
    answering ``/healthz``. A second SIGTERM during the shutdown skipped the children still to stop, and
    a killed demo left both behind; now both end with it, whichever way it ends."""
    demo, port, log = _start_demo(tmp_path)
    try:
        text = log.read_text(errors="replace")
        children = [int(re.search(r"celery worker started \(pid (\d+)", text).group(1)),
                    int(re.search(r"\[(\d+)\] \[INFO\] Starting gunicorn", text).group(1))]
        if how == "SIGKILL":
            demo.kill()
        else:
            demo.send_signal(signal.SIGTERM)
            time.sleep(0.3)  # the first one is stopping gunicorn (up to its graceful timeout)
            demo.send_signal(signal.SIGTERM)
        demo.wait(timeout=30)
        deadline = time.monotonic() + 20
        while any(map(_alive, children)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(map(_alive, children)), (children, log.read_text(errors="replace")[-2000:])
        with pytest.raises(OSError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
    finally:
        if demo.poll() is None:
            demo.kill()
        for pid in children if "children" in locals() else []:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)  # each child leads its own session
