"""In-process timing of the stored comparison of two runs and the export preview's stored per-article parts at a
million pairs (issue 37, third part).

    DATABASE_URL=postgres://.../alignapp_big37c .venv/bin/python bench/preview_compare_stored_1m.py 3 7 8

Comparison: the first computation (SQL; the stored row removed first), then the stored answer (cache cleared:
as after a restart) at offsets 0 and 250,000. Preview (gold): every part computed (the parts removed first, no
budget), then the answer summed from the stored parts with the cache cleared, the stored answer with the cache
cleared again (as after a restart), warm, and after a label given to one article (and removed again: the data set
is left as found). Prints JSON with the 1-minute
load average beside each figure.
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
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.cache import cache  # noqa: E402

from annotation.models import AlignmentRun, CandidatePair, Label, PreviewPart, Project, RunComparison  # noqa: E402
from annotation.services import export  # noqa: E402
from annotation.services.alignment import run_comparison  # noqa: E402
from annotation.services.export import preview_parts  # noqa: E402

REPEAT = int(os.environ.get("REPEAT", "10"))


def once(fn) -> dict:
    load = os.getloadavg()[0]
    t0 = time.monotonic()
    fn()
    return {"s": round(time.monotonic() - t0, 3), "load_1m": round(load, 2)}


def warm(fn) -> dict:
    load = os.getloadavg()[0]
    times = []
    for _ in range(REPEAT):
        t0 = time.monotonic()
        fn()
        times.append(time.monotonic() - t0)
    times.sort()
    return {"p50_s": round(statistics.median(times), 4), "p95_s": round(times[min(len(times) - 1, int(0.95 * len(times)))], 4),
            "load_1m": [round(load, 2), round(os.getloadavg()[0], 2)]}


project = Project.objects.get(pk=int(sys.argv[1]))
old, new = (AlignmentRun.objects.get(pk=int(a)) for a in sys.argv[2:4])
only = sys.argv[4] if len(sys.argv) > 4 else ""
out = {"repeat": REPEAT}
if only in ("", "compare"):
    RunComparison.objects.filter(old=old, new=new).delete()
    out["compare_first_sql"] = once(lambda: run_comparison.compare(old, new, pairs=True))
    cache.clear()
    out["compare_stored_cold"] = once(lambda: run_comparison.compare(old, new, pairs=True))
    out["compare_stored_warm"] = warm(lambda: run_comparison.compare(old, new, pairs=True))
    out["compare_stored_offset_250000"] = warm(lambda: run_comparison.compare(old, new, pairs=True, offset=250_000))
if only in ("", "preview"):
    options = export.ExportOptions.parse({"kind": "gold"})
    PreviewPart.objects.filter(project=project).delete()
    cache.clear()
    first = {}
    out["preview_first_every_part"] = once(lambda: first.update(preview_parts.preview(project, options, max_seconds=3600)))
    out["preview_first_every_part"]["articles"] = first["articles_seen"]
    out["preview_first_every_part"]["pairs"] = first["pairs"]
    cache.clear()
    out["preview_from_parts_cold"] = once(lambda: export.preview(project, options))
    cache.clear()
    out["preview_stored_answer_cold"] = once(lambda: export.preview(project, options))
    out["preview_warm"] = warm(lambda: export.preview(project, options))
    pair = CandidatePair.objects.filter(article__project=project, labels__isnull=True).order_by("pk").first()
    who = get_user_model().objects.get(username="big-project-a001")
    label = Label.objects.create(pair=pair, annotator=who, value="aligned", seconds=3.0)
    try:
        answer = {}
        out["preview_after_a_label"] = once(lambda: answer.update(export.preview(project, options)))
        out["preview_after_a_label"]["pairs_delta"] = answer["pairs"] - first["pairs"]
    finally:
        label.delete()
    out["preview_after_its_removal"] = once(lambda: export.preview(project, options))
out["load_average_end"] = os.getloadavg()
print(json.dumps(out, indent=1))
