"""Hostile uploads against a running web server (issue 36 items 8-10; not a test): gunicorn on a fresh
SQLite database receives ``--copies`` parallel uploads of each of the probe's hostile files (an hf/articles
parquet of 2 M sentences a side, 1.5 M older-layout export rows, a Newsela zip naming one 1 MB text 400
times) while another user lists their projects every 0.1 s. Prints each upload's answer and time, the
other user's latencies (median, max) and the web processes' peak RSS (``VmHWM`` of gunicorn's master and
workers) as one JSON object.

    .venv/bin/python bench/import_contention.py [--copies 4] [--timeout 300]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
WORK = ROOT / "var" / "bench" / "contention"


def peak_mb(pid: int) -> float:
    """VmHWM of ``pid`` and its children (gunicorn's workers), the largest, in MB."""
    pids = [pid] + [int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True,
                                                    text=True).stdout.split()]
    peaks = []
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peaks.append(int(line.split()[1]) / 1024)
        except OSError:
            pass
    return round(max(peaks or [0]), 1)


def main() -> None:
    import import_layouts
    import requests

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    files = [import_layouts.articles_bomb(WORK), import_layouts.export_rows_bomb(WORK),
             import_layouts.newsela_one_text(WORK, 400, 1_000_000, words=40)]
    db = WORK / "db.sqlite3"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{db}", "IMPORT_DIR": str(WORK / "imports"), "LOG_LEVEL": "WARNING",
           "ALIGNAPP_VAR_DIR": str(WORK / "var")}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    setup = ("from annotation.models import LabelScheme, Project, Membership; from tests import factories; "
             "from rest_framework.authtoken.models import Token; u = factories.make_user('rita', researcher=True); "
             "p = factories.make_project('bench', rita='researcher'); "
             "print(p.pk, Token.objects.get_or_create(user=u)[0].key)")
    out = subprocess.run([sys.executable, "manage.py", "shell", "-c", setup], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    project, token = int(out[-2]), out[-1]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    gunicorn = subprocess.Popen([sys.executable, "-m", "gunicorn", "alignapp.wsgi:application", "--bind",
                                 f"127.0.0.1:{port}", "--workers", "2", "--threads", "4", "--timeout", "600"],
                                cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
    base, headers = f"http://127.0.0.1:{port}", {"Authorization": f"Token {token}"}
    try:
        for _ in range(120):
            try:
                if requests.get(f"{base}/healthz", timeout=1).ok:
                    break
            except requests.RequestException:
                time.sleep(0.5)
        baseline = [requests.get(f"{base}/api/projects/", headers=headers, timeout=30).elapsed.total_seconds()
                    for _ in range(10)]
        latencies: list[float] = []
        done = threading.Event()

        def other_user() -> None:
            while not done.is_set():
                started = time.monotonic()
                requests.get(f"{base}/api/projects/", headers=headers, timeout=60)
                latencies.append(time.monotonic() - started)
                time.sleep(0.1)

        def upload(path: Path) -> dict:
            started = time.monotonic()
            with path.open("rb") as fh:
                response = requests.post(f"{base}/api/projects/{project}/import/", headers=headers,
                                         files={"files": (path.name, fh)}, timeout=args.timeout)
            body = response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
            return {"file": path.name, "status": response.status_code, "seconds": round(time.monotonic() - started, 2),
                    "answer": str(body.get("problems") or body.get("status_url") or body)[:200]}

        watcher = threading.Thread(target=other_user)
        watcher.start()
        with ThreadPoolExecutor(max_workers=len(files) * args.copies) as pool:
            uploads = list(pool.map(upload, [f for f in files for _ in range(args.copies)]))
        time.sleep(1)
        done.set()
        watcher.join()
        print(json.dumps({"benchmark": "hostile uploads vs another user", "database": "sqlite", "cpus": os.cpu_count(),
                          "copies": args.copies, "web_peak_rss_mb": peak_mb(gunicorn.pid),
                          "other_user_baseline_median_s": round(statistics.median(baseline), 3),
                          "other_user_during_median_s": round(statistics.median(latencies), 3),
                          "other_user_during_max_s": round(max(latencies), 3), "other_user_requests": len(latencies),
                          "uploads": uploads}, indent=2))
    finally:
        os.killpg(gunicorn.pid, 15)
        gunicorn.wait(timeout=30)


if __name__ == "__main__":
    main()
