"""One annotator's queue submit→next timed in this process (``bench/big_project.py --profile-queue N``):
the wall time of each, the database's share, this process's CPU, and the statements that cost most.
Django must be set up on the benchmark's database first."""
from __future__ import annotations

import os
import statistics
import time
import uuid
from types import SimpleNamespace


def profile_queue(project: int, username: str, n: int) -> dict:
    """``n`` submit→next of one annotator (``username``) in this process (this checkout, not ``--code``): the time of
    each, its statements and the slowest of them, so a missed target comes with where the time goes."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotation.services.review import annotator, queue
    from annotation.services.review.label_input import LabelInput

    user = get_user_model().objects.get(username=username)
    actor = annotator.load(user, project)
    pair = queue.next_item(actor)
    runs, slowest, db_ms, cpu_ms = [], {}, [], []
    for _ in range(n):
        actor = annotator.load(user, project)  # as a request does
        label = LabelInput.parse(actor.project.label_scheme, value="aligned", seconds=11.0,
                                 client_token=str(uuid.uuid4()))
        with CaptureQueriesContext(connection) as queries:
            t0, cpu0 = time.perf_counter(), time.process_time()
            _, _, state = queue.submit_and_next(actor, pair.pk, label)
            took = (time.perf_counter() - t0) * 1000
            cpu_ms.append((time.process_time() - cpu0) * 1000)  # this process's CPU: Django's own work
        runs.append((took, len(queries.captured_queries)))
        db_ms.append(sum(float(q["time"]) for q in queries.captured_queries) * 1000)
        for q in queries.captured_queries:
            key = q["sql"][:90]
            slowest[key] = slowest.get(key, 0.0) + float(q["time"]) * 1000 / n
        pair = SimpleNamespace(pk=state["item"]["pair"])
    times = [t for t, _ in runs]
    return {"submits": n, "ms_p50": round(statistics.median(times), 1), "ms_max": round(max(times), 1),
            "db_ms_p50": round(statistics.median(db_ms), 1), "python_cpu_ms_p50": round(statistics.median(cpu_ms), 1),
            "load_avg_1m": round(os.getloadavg()[0], 2),
            "queries": sorted({q for _, q in runs}),
            "slowest_statements_ms_each": {k: round(v, 2) for k, v in sorted(slowest.items(), key=lambda kv: -kv[1])[:8]}}
