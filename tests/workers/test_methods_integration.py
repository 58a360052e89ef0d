"""The seed-paper methods run as alignment runs on the demo corpus through a real worker, and a
scoring job started from the API completes there too."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, CandidatePair, Job, Status
from annotation.services.corpus.demo import ensure_demo
from tests.worker_process import wait_for

pytestmark = [pytest.mark.services, pytest.mark.slow]


def _researcher(api):
    from django.contrib.auth import get_user_model

    return api(get_user_model().objects.get(username="researcher"))


def test_sum4simp_wivico_and_muss_runs_complete_on_the_demo_corpus(api, embedded_worker):
    project, _ = ensure_demo()
    client = _researcher(api)
    run_ids = {}
    for method in ("sum4simp", "wivico", "muss"):
        response = client.post("/api/runs/", {"project": project.pk, "method": method}, format="json")
        assert response.status_code == 201, response.content
        run_ids[method] = response.json()["id"]
    for method, run_id in run_ids.items():
        wait_for(lambda run_id=run_id: AlignmentRun.objects.get(pk=run_id).is_finished, 300, embedded_worker, f"the {method} run")
    runs = {m: AlignmentRun.objects.get(pk=pk) for m, pk in run_ids.items()}
    for method, run in runs.items():
        assert run.status == Status.SUCCEEDED, (method, run.error)
        assert run.articles_done == run.articles_total == 8 and run.progress == 100.0
        assert run.pair_count == CandidatePair.objects.filter(predictions__run=run).count()
    # The demo levels rewrite each other closely: every method finds pairs, with its own evidence.
    assert runs["sum4simp"].pair_count > 0 and runs["wivico"].pair_count > 0 and runs["muss"].pair_count > 0
    s4s = CandidatePair.objects.filter(predictions__run=runs["sum4simp"]).first()
    assert s4s.simple_key.count(",") == 0 and {"d_max", "n_stitched"} <= set(s4s.features)  # n:1 by design
    wivico = CandidatePair.objects.filter(predictions__run=runs["wivico"]).first()
    assert {"n", "m", "cutoff", "margin"} <= set(wivico.features) and wivico.score >= wivico.features["cutoff"]
    muss = CandidatePair.objects.filter(predictions__run=runs["muss"]).first()
    assert muss.predicted_label == "aligned" and muss.features["l2_distance"] <= 0.5
    ordered = client.get(f"/api/pairs/?run={runs['wivico'].pk}&ordering=-score").json()["results"]
    assert [p["score"] for p in ordered] == sorted((p["score"] for p in ordered), reverse=True)


def test_an_access_attributes_job_from_the_api_completes_on_the_embedded_worker(api, embedded_worker):
    project, _ = ensure_demo()
    client = _researcher(api)
    run = client.post("/api/runs/", {"project": project.pk, "method": "tfidf"}, format="json").json()
    wait_for(lambda: AlignmentRun.objects.get(pk=run["id"]).is_finished, 240, embedded_worker, "the tfidf run")
    response = client.post(f"/api/projects/{project.pk}/score/",
                           {"kind": "access-attributes", "params": {"run": run["id"]}}, format="json")
    assert response.status_code == 202, response.content
    job_id = response.json()["id"]
    wait_for(lambda: Job.objects.get(pk=job_id).is_finished, 240, embedded_worker, "the access-attributes job")
    job = Job.objects.get(pk=job_id)
    assert job.status == Status.SUCCEEDED, job.error
    pairs = CandidatePair.objects.filter(predictions__run_id=run["id"])
    assert job.result["pairs"] == pairs.count() > 0 and job.progress == 100.0
    assert all(0 < p.features["access_char_ratio"] and 0 <= p.features["access_lev_sim"] <= 1 for p in pairs)
    shortest = client.get(f"/api/pairs/?run={run['id']}&ordering=features__access_char_ratio").json()["results"][0]
    assert shortest["features"]["access_char_ratio"] == min(p.features["access_char_ratio"] for p in pairs)
    polled = client.get(f"/api/jobs/{job_id}/").json()
    assert polled["status"] == "succeeded" and polled["result"]["keys"][:3] == [
        "access_char_ratio", "access_lev_sim", "access_word_rank_ratio"]
