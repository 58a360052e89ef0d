"""An alignment run started from the API on the demo project completes through a real worker."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, CandidatePair, Status
from annotation.services.corpus.demo import ensure_demo
from tests.worker_process import wait_for

pytestmark = [pytest.mark.services, pytest.mark.slow]


def _start_and_wait(api, method: str, log, timeout: float = 240):
    from django.contrib.auth import get_user_model

    project, _ = ensure_demo()
    client = api(get_user_model().objects.get(username="researcher"))
    response = client.post("/api/runs/", {"project": project.pk, "method": method}, format="json")
    assert response.status_code == 201, response.content
    run_id = response.json()["id"]
    wait_for(lambda: AlignmentRun.objects.get(pk=run_id).is_finished, timeout, log, f"the {method} run")
    return client, AlignmentRun.objects.get(pk=run_id)


def test_a_crf_run_from_the_api_completes_on_the_embedded_worker(api, embedded_worker):
    client, run = _start_and_wait(api, "crf", embedded_worker)
    assert run.status == Status.SUCCEEDED, run.error
    assert run.progress == 100.0
    assert run.articles_total == run.articles_done == 8  # 4 demo articles × 2 adjacent level pairs
    assert run.pair_count > 0 and run.timings["total_s"] > 0
    pairs = client.get(f"/api/pairs/?run={run.pk}").json()
    assert pairs["count"] == run.pair_count == CandidatePair.objects.filter(predictions__run=run).count()
    first = pairs["results"][0]
    assert first["complex_text"] and first["simple_text"] and first["predicted_label"] in ("aligned", "partial")


def test_a_tfidf_run_from_the_api_completes_on_a_redis_worker(api, redis_worker):
    client, run = _start_and_wait(api, "tfidf", redis_worker)
    assert run.status == Status.SUCCEEDED, run.error
    assert client.get(f"/api/runs/{run.pk}/").json()["pair_count"] == run.pair_count > 0
