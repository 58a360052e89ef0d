"""A mining run on real Celery workers (filesystem broker, bundled MiniLM): two workers share its
chunks; a worker killed mid-run is replaced and the run resumes from the chunks already done."""
from __future__ import annotations

import os
import signal

import pytest

from annotation.models import AlignmentRun, CandidatePair, Status
from annotation.services.alignment import mining
from annotation.services.corpus.demo import ensure_demo
from tests.worker_process import app_broker, running_worker, wait_for

pytestmark = [pytest.mark.services, pytest.mark.slow]

PARAMS = {"shard_size": 24}


@pytest.fixture
def broker(transactional_db, tmp_path, monkeypatch, settings):
    """The filesystem broker of the embedded default; workers and this process share MEDIA_ROOT."""
    media = tmp_path / "media"
    monkeypatch.setenv("MEDIA_ROOT", str(media))
    settings.MEDIA_ROOT = str(media)
    folder = tmp_path / "broker"
    for worker in ("w1", "w2"):
        (tmp_path / worker).mkdir()
    with app_broker("filesystem://", folder):
        yield folder


def _start(api):
    from django.contrib.auth import get_user_model

    project, _ = ensure_demo()
    client = api(get_user_model().objects.get(username="researcher"))
    response = client.post("/api/runs/", {"project": project.pk, "method": "muss-corpus", "params": PARAMS}, format="json")
    assert response.status_code == 201, response.content
    return client, response.json()["id"]


def test_two_workers_share_a_mining_runs_chunks(api, broker, tmp_path):
    with running_worker("filesystem://", tmp_path / "w1", broker) as (_, log1), \
            running_worker("filesystem://", tmp_path / "w2", broker) as (_, log2):
        client, run_id = _start(api)
        wait_for(lambda: AlignmentRun.objects.get(pk=run_id).is_finished, 600, log1, "the mining run")
    run = AlignmentRun.objects.get(pk=run_id)
    assert run.status == Status.SUCCEEDED, run.error + log2.read_text(errors="replace")[-3000:]
    assert run.pair_count == run.result["mined_pairs"] > 0 and run.progress == 100.0
    assert run.result["shards"] > 2
    workers = {w for stage in run.result["chunks"].values() for w in stage["workers"]}
    assert len({w.rsplit(":", 1)[1] for w in workers}) == 2, run.result["chunks"]  # both processes worked
    pairs = client.get(f"/api/pairs/?run={run_id}").json()
    assert pairs["count"] == run.pair_count
    assert all(p["predicted_label"] == "aligned" and p["score"] >= 0.75 for p in pairs["results"])


def test_a_killed_worker_is_replaced_and_the_run_resumes(api, broker, tmp_path):
    with running_worker("filesystem://", tmp_path / "w1", broker) as (worker, log):
        client, run_id = _start(api)
        run = AlignmentRun.objects.get(pk=run_id)

        def encoded() -> int:
            folder = mining.folder_of(AlignmentRun.objects.get(pk=run_id))
            return len(list(folder.glob("vectors/*.npy")))

        wait_for(lambda: encoded() >= 2, 300, log, "two encoded shards")
        os.killpg(worker.pid, signal.SIGKILL)  # the worker dies mid-stage
        worker.wait(timeout=30)
    done_before = encoded()
    run.refresh_from_db()
    assert run.status == Status.RUNNING and 2 <= done_before
    with running_worker("filesystem://", tmp_path / "w2", broker) as (_, log2):
        response = client.post(f"/api/runs/{run_id}/retry/")  # resume the stalled run
        assert response.status_code == 202, response.content
        wait_for(lambda: AlignmentRun.objects.get(pk=run_id).is_finished, 600, log2, "the resumed mining run")
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED, run.error
    assert run.attempts == 2 and run.pair_count == run.result["mined_pairs"] > 0
    # the shards encoded before the crash were kept: two processes appear among the encoders
    encoders = run.result["chunks"]["encode"]["workers"]
    assert len({w.rsplit(":", 1)[1] for w in encoders}) == 2, encoders
    assert CandidatePair.objects.filter(predictions__run=run).count() == run.pair_count
