"""In-process timing of the export preview and the compare-two-runs service at a million pairs (issue 37).

    DATABASE_URL=postgres://.../alignapp_big37 .venv/bin/python bench/preview_compare_1m.py 3 7 8

Times ``export.preview`` (gold and predictions) and ``run_comparison.compare`` (+ both runs' scores, as the
API answers) once cold (first call in a fresh process) and ``REPEAT`` times warm; prints JSON. Reads only.
"""
import json
import os
import statistics
import sys
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "alignapp.settings")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import django  # noqa: E402

django.setup()
from annotation.models import AlignmentRun, Project  # noqa: E402
from annotation.services import export  # noqa: E402
from annotation.services.alignment import run_comparison  # noqa: E402
from annotation.services.training import run_scores  # noqa: E402

REPEAT = int(os.environ.get("REPEAT", "5"))


def timed(fn) -> dict:
    t0 = time.monotonic()
    fn()
    cold = time.monotonic() - t0
    warm = []
    for _ in range(REPEAT):
        t0 = time.monotonic()
        fn()
        warm.append(time.monotonic() - t0)
    warm.sort()
    return {"cold_s": round(cold, 3), "warm_p50_s": round(statistics.median(warm), 4),
            "warm_p95_s": round(warm[min(len(warm) - 1, int(0.95 * len(warm)))], 4)}


project = Project.objects.get(pk=int(sys.argv[1]))
old, new = (AlignmentRun.objects.get(pk=int(a)) for a in sys.argv[2:4])
only = sys.argv[4] if len(sys.argv) > 4 else ""
out = {}
if only in ("", "compare"):
    out["compare"] = timed(lambda: (run_comparison.compare(old, new, pairs=True),
                                    run_scores.run_scores(old), run_scores.run_scores(new)))
    out["compare_service_only"] = timed(lambda: run_comparison.compare(old, new, pairs=True))
    out["run_scores_both"] = timed(lambda: (run_scores.run_scores(old), run_scores.run_scores(new)))
if only in ("", "preview"):
    out["preview_gold"] = timed(lambda: export.preview(project, export.ExportOptions.parse({"kind": "gold"})))
    out["preview_auto"] = timed(lambda: export.preview(
        project, export.ExportOptions.parse({"kind": "auto", "runs": [new.pk]})))
print(json.dumps(out, indent=1))
