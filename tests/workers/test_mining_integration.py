"""Mining runs on real Celery workers (bundled MiniLM, PostgreSQL or the embedded default, the filesystem
broker or Redis), on the one executor of every run: two workers share a mining run's chunks; cancelling
mid-mining leaves no chunk running; a worker SIGKILLed mid-mining is replaced and the run ends with the
pairs an uninterrupted run mines. The corpus is the mining unit tests' (five documents, 13 sequences):
``shard_size`` 2 cuts it into 7 shards, 23 chunks."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from annotation.models import AlignmentRun, CandidatePair, Prediction, RunChunk, Status
from annotation.services.alignment import alignment_runs
from annotation.services.background import progress
from tests.annotation.services.alignment.test_mining import health_and_penguins
from tests.factories import make_article
from tests.worker_process import app_broker, kill_process, running_worker, wait_for

pytestmark = [pytest.mark.slow]

PARAMS = {"max_distance": 1.5, "max_relative": 0.95, "k": 4, "shard_size": 2}
LIVENESS = {"WORKER_HEARTBEAT_SECONDS": 1, "WORKER_STALE_SECONDS": 4}


@pytest.fixture
def env(settings, tmp_path) -> dict[str, str]:
    """Short liveness settings, and one MEDIA_ROOT (the job folders) for the workers and this process."""
    for name, value in LIVENESS.items():
        setattr(settings, name, value)
    settings.MEDIA_ROOT = str(tmp_path / "media")
    for name in ("w1", "w2"):
        (tmp_path / name).mkdir()
    return {**{k: str(v) for k, v in LIVENESS.items()}, "MEDIA_ROOT": settings.MEDIA_ROOT}


@pytest.fixture
def corpus(transactional_db, project):
    health_and_penguins(project)
    make_article(project, "Hospital waits", {
        "report": [["Officials promised that hospital waiting lists would fall within two years."]]})
    return project


def mined(run: AlignmentRun) -> set[tuple]:
    """The run's pairs, labels and scores (to 4 places: two processes' MiniLM may differ in the last bits)."""
    return {(*row[:-1], round(row[-1], 4)) for row in Prediction.objects.filter(run=run).values_list(
        "pair__complex_document_id", "pair__simple_document_id", "pair__complex_key", "pair__simple_key",
        "predicted_label", "score")}


def uninterrupted(project) -> set[tuple]:
    """What a mining run nobody interrupts mines (run in this process, chunk after chunk)."""
    run = alignment_runs.start_run(project, "muss-corpus", params=PARAMS, enqueue=False)
    alignment_runs.execute_run(run.pk)
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED and run.chunks.count() == 23, run.error
    return mined(run)


def finished(run_id: int, log: Path, timeout: float = 240) -> AlignmentRun:
    wait_for(lambda: AlignmentRun.objects.get(pk=run_id).is_finished, timeout, log, "the mining run")
    return AlignmentRun.objects.get(pk=run_id)


def when(run: AlignmentRun, ready, what: str, log: Path, timeout: float = 180) -> list[str]:
    """Poll the run's chunk states every 10 ms until ``ready(states)``; returns them."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = list(RunChunk.objects.filter(run=run).order_by("index").values_list("status", flat=True))
        if ready(states):
            return states
        time.sleep(0.01)
    pytest.fail(f"never saw {what}\n{log.read_text(errors='replace')[-3000:]}")


def mid_mining(states: list[str]) -> bool:
    """Two chunks done and one running: the worker is inside the mining."""
    return states.count(Status.SUCCEEDED) >= 2 and Status.RUNNING in states


def test_two_workers_share_a_mining_runs_chunks(corpus, env, tmp_path):
    folder = tmp_path / "broker"
    env = {**env, "CELERY_BROKER_POLL_MS": "100"}  # 23 short chunks, stage after stage: poll more often
    with app_broker("filesystem://", folder), \
            running_worker("filesystem://", tmp_path / "w1", folder, env=env) as (_, log1), \
            running_worker("filesystem://", tmp_path / "w2", folder, env=env) as (_, log2):
        run = alignment_runs.start_run(corpus, "muss-corpus", params=PARAMS)
        run = finished(run.pk, log1)
    assert run.status == Status.SUCCEEDED, run.error + log2.read_text(errors="replace")[-3000:]
    assert run.pair_count == run.result["mined_pairs"] > 0 and run.progress == 100.0
    assert run.result["chunks"]["done"] == run.result["chunks"]["total"] == 23
    assert len(run.result["chunks"]["workers"]) == 2, run.result["chunks"]  # both processes ran chunks
    assert mined(run) == uninterrupted(corpus)


@pytest.mark.services
def test_cancelling_a_mining_run_mid_way_leaves_no_chunk_running(corpus, env, redis_url, tmp_path):
    import redis

    redis.Redis.from_url(redis_url).flushdb()
    with app_broker(redis_url), running_worker(redis_url, tmp_path / "w1", env=env) as (_, log):
        run = alignment_runs.start_run(corpus, "muss-corpus", params=PARAMS)
        when(run, mid_mining, "a chunk running after two were done", log)
        assert progress.cancel(AlignmentRun, run.pk)
        time.sleep(3)  # a running chunk stops at its next check; the rest find the run cancelled
        states = list(RunChunk.objects.filter(run=run).values_list("status", flat=True))
    assert AlignmentRun.objects.get(pk=run.pk).status == Status.CANCELLED
    assert Status.RUNNING not in states and states.count(Status.QUEUED) > 0, states
    assert not Prediction.objects.filter(run=run).exists()  # cancelled before its pairs were saved


@pytest.mark.services
def test_a_worker_killed_mid_mining_is_replaced_and_the_run_mines_what_an_uninterrupted_one_does(
        corpus, env, redis_url, tmp_path):
    import redis

    redis.Redis.from_url(redis_url).flushdb()
    with app_broker(redis_url):
        with running_worker(redis_url, tmp_path / "w1", env=env) as (worker, log):
            run = alignment_runs.start_run(corpus, "muss-corpus", params=PARAMS)
            when(run, mid_mining, "a chunk running after two were done", log)
            kill_process(worker)  # SIGKILL mid-chunk
        states = list(RunChunk.objects.filter(run=run).values_list("status", flat=True))
        assert Status.RUNNING in states and states.count(Status.SUCCEEDED) < len(states)  # killed mid-mining
        with running_worker(redis_url, tmp_path / "w2", env=env) as (_, log):
            run = finished(run.pk, log)
    assert run.status == Status.SUCCEEDED, run.error
    assert run.result["chunks"]["done"] == run.result["chunks"]["total"] == 23
    assert max(RunChunk.objects.filter(run=run).values_list("attempts", flat=True)) >= 2  # the lost chunk ran again
    expected = uninterrupted(corpus)
    assert mined(run) == expected and run.pair_count == len(expected) > 0  # exactly one set of results
    assert CandidatePair.objects.filter(predictions__run=run).count() == run.pair_count
