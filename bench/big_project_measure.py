"""Measurements of ``bench/big_project.py`` that need more than one request: the list APIs at their first,
1,000th and last page (cold and warm) without walking every page, and each export format run the way the
app runs it (the ``export`` job's function, in a child process of the served code) with its time and peak RSS.
"""
from __future__ import annotations

import base64
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.annotation_latency import log, percentile

FORMATS = ("tsv", "parallel", "jsonl", "articles", "hf")


def _timed_get(s, url: str) -> tuple[float, dict]:
    t0 = time.perf_counter()
    response = s.get(url, timeout=600)
    took = round(time.perf_counter() - t0, 4)
    response.raise_for_status()
    return took, response.json()


def _cursor(next_url: str | None) -> dict | None:
    """The decoded ``cursor`` of a ``next`` link (the keyset pagination), None for page numbers."""
    if not next_url or "cursor=" not in next_url:
        return None
    raw = next_url.split("cursor=")[1].split("&")[0]
    return json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))


def page_url(s, url: str, page: int, size: int, first: dict) -> str:
    """The URL a client following ``next`` would reach as page ``page``: with keyset cursors the cursor of
    the previous page's last row (found with an untimed ``?page=`` request), else ``?page=N``."""
    cursor = _cursor(first.get("next"))
    if cursor is None or page == 1 or len(cursor.get("k", ())) != 1:
        return f"{url}&page={page}"
    previous = s.get(f"{url}&page={page - 1}&page_size={size}", timeout=600).json()["results"]
    token = json.dumps({"k": [previous[-1]["id"]], "n": first["count"]}).encode()
    return f"{url}&cursor={base64.urlsafe_b64encode(token).decode().rstrip('=')}"


def list_marks(base: str, token: str, project: int, runs: list[int], repeat: int) -> dict:
    """Each list API at pages 1, 1,000 and the last (100 rows a page): the first request of the page
    (cold) and p50/p95 of ``repeat`` more (warm)."""
    import requests

    s = requests.Session()
    s.headers["Authorization"] = f"Token {token}"
    out = {}
    for name, url in (("pairs", f"{base}/api/pairs/?project={project}"),
                      ("run_pairs", f"{base}/api/pairs/?project={project}&run={runs[1]}"),
                      ("labels", f"{base}/api/labels/?project={project}"),
                      ("articles", f"{base}/api/articles/?project={project}"),
                      ("runs", f"{base}/api/runs/?project={project}")):
        cold, first = _timed_get(s, url)
        size = len(first["results"]) or 1
        last = max(1, -(-first["count"] // size))
        result = {"count": first["count"], "last_page": last, "keyset": _cursor(first.get("next")) is not None}
        for page in sorted({1, min(1000, last), last}):
            log(f"list {name} page {page}")
            target = url if page == 1 else page_url(s, url, page, size, first)
            took = cold if page == 1 else _timed_get(s, target)[0]
            warm = [_timed_get(s, target)[0] for _ in range(repeat)]
            key = "last" if page == last and page > 1000 else str(page)
            result[f"page_{key}"] = {"cold_s": took, "warm_p50_s": round(statistics.median(warm), 4),
                                     "warm_p95_s": round(percentile(warm, 95), 4)}
        out[name] = result
    return out


# -- exports --------------------------------------------------------------------------------------------
CHILD = """
import json, os, resource, sys, time
import django
django.setup()
from annotation.models import Project, Export
from annotation.services import export
from django.contrib.auth import get_user_model
project = Project.objects.get(pk=int(sys.argv[1]))
user = get_user_model().objects.get(username=sys.argv[3])
t0 = time.monotonic()
parse = getattr(export, "validate", None) or export.ExportOptions.parse  # the code before issue 38: validate
done = export.start_export(project, parse(json.loads(sys.argv[2])), user=user)
export.run_export_job(done.job_id)
done = Export.objects.get(pk=done.pk)
took, rss = round(time.monotonic() - t0, 1), round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
import hashlib, shutil
from pathlib import Path
root = Path(export.export_dir(done))
files = {}  # each written file's sha256 (not the manifest, README or zip: they carry dates, ids and timings)
for path in sorted(root.rglob("*")):
    if path.is_file() and path.suffix not in (".zip",) and path.name not in ("manifest.json", "README.txt"):
        with path.open("rb") as handle:
            files[str(path.relative_to(root))] = hashlib.file_digest(handle, "sha256").hexdigest()
shutil.rmtree(root, ignore_errors=True)
if export.archive_path(done) is not None:
    export.archive_path(done).unlink(missing_ok=True)
print(json.dumps({"seconds": took, "pairs": done.pair_count, "export": done.pk, "peak_rss_mb": rss,
                  "timings": done.manifest.get("timings", {}), "files": files, "load_average": os.getloadavg()}))
"""


def exports(code: Path, url: str, project: int, runs: list[int], username: str, plan: list[str],
            media: Path) -> dict:
    """Each export in ``plan`` (``gold:<format>`` or ``auto:<format>``, ``all`` for every format) run by the
    served code's ``export`` job function in a child process: seconds, pairs, peak RSS (the child's own
    ``ru_maxrss``). The exports' rows, files and the splits they assigned are removed afterwards, so every
    measurement sees the same project."""
    env = {**os.environ, "DATABASE_URL": url, "PYTHONPATH": str(code), "DJANGO_SETTINGS_MODULE": "alignapp.settings",
           "MEDIA_ROOT": str(media)}
    out = {}
    try:
        for item in plan:
            kind, fmt = item.split(":")
            options = {"kind": kind, "formats": list(FORMATS) if fmt == "all" else [fmt]}
            if kind == "auto":
                options.update(runs=[runs[0]], labels=["aligned", "partial", "not-aligned"], derived=False)
            log(f"export {item}")
            done = subprocess.run([sys.executable, "-c", CHILD, str(project), json.dumps(options), username],
                                  cwd=code, env=env, capture_output=True, text=True, timeout=3600)
            if done.returncode != 0:
                out[item] = {"error": done.stderr[-2000:]}
                continue
            out[item] = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        forget_exports(project)
    out["children_peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
    return out


def forget_exports(project: int) -> None:
    """Remove what the exports wrote: their rows and jobs, the splits they assigned (the bench project is built
    without any) and the split policy they remembered."""
    from annotation.models import Export, Job, Project, Split

    Export.objects.filter(project_id=project).delete()
    Job.objects.filter(project_id=project, kind="export").delete()
    Split.objects.filter(article__project_id=project).delete()
    p = Project.objects.get(pk=project)
    if "splits" in (p.config or {}):
        p.config = {k: v for k, v in p.config.items() if k != "splits"}
        p.save(update_fields=["config"])
