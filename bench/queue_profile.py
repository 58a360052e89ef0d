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
    each (the seat's load included, as in a request; not the token, DRF or JSON), its statements and the slowest
    of them, so a missed target comes with where the time goes."""
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
        label = LabelInput.parse(actor.project.label_scheme, value="aligned", seconds=11.0,
                                 client_token=str(uuid.uuid4()))
        with CaptureQueriesContext(connection) as queries:
            t0, cpu0 = time.perf_counter(), time.process_time()
            # as the submit request does: the seat with the annotator's counts and their assignment of the pair
            actor = annotator.load(user, project, counts=True, pair_id=pair.pk)
            _, _, state = queue.submit_and_next(actor, pair.pk, label, mine=actor.mine)
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


def profile_queue_http(project: int, username: str, n: int) -> dict:
    """``n`` ``POST .../queue/submit/`` (label + next item) of one annotator through the whole Django stack in
    this process (Django's test client: middleware, token authentication, DRF, JSON): wall time, this
    process's CPU and the statements of each, less sensitive to a loaded machine than the load test."""
    import json

    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from rest_framework.authtoken.models import Token

    user = get_user_model().objects.get(username=username)
    client = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}", HTTP_HOST="127.0.0.1")
    base = f"/api/projects/{project}/queue"
    item = client.get(f"{base}/next/").json()["item"]
    walls, cpus, statements, db_ms, size = [], [], set(), [], 0
    for i in range(n + 3):  # the first three warm the process up (compiled queries, caches)
        body = {"pair": item["pair"], "value": "aligned", "seconds": 11.0, "client_token": str(uuid.uuid4())}
        with CaptureQueriesContext(connection) as queries:
            t0, cpu0 = time.perf_counter(), time.process_time()
            response = client.post(f"{base}/submit/", json.dumps(body), content_type="application/json")
            wall, cpu = (time.perf_counter() - t0) * 1000, (time.process_time() - cpu0) * 1000
        assert response.status_code == 201, response.content[:300]
        item, size = response.json()["item"], len(response.content)
        if i >= 3:
            walls.append(wall)
            cpus.append(cpu)
            statements.add(len(queries.captured_queries))
            db_ms.append(sum(float(q["time"]) for q in queries.captured_queries) * 1000)
    return {"requests": n, "ms_p50": round(statistics.median(walls), 1), "ms_max": round(max(walls), 1),
            "python_cpu_ms_p50": round(statistics.median(cpus), 1), "db_ms_p50": round(statistics.median(db_ms), 1),
            "statements": sorted(statements), "response_bytes": size, "load_avg_1m": round(os.getloadavg()[0], 2)}
