"""Issue 20: one alignment run shared by real Celery workers, in chunks — two workers both run chunks and
write what one process writes; a worker SIGKILLed mid-chunk (filesystem broker, Redis) is replaced and
the run finishes with the same pairs; cancelling mid-run leaves no chunk running."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from annotation.models import AlignmentRun, RunChunk, Status
from annotation.services.alignment import alignment_runs
from annotation.services.background import progress
from tests.worker_process import app_broker, kill_process, running_worker, wait_for
from tests.workers.test_faults import PARAMS, build_corpus, clean_run, predictions, run_state

pytestmark = [pytest.mark.slow]

CHUNKED = {"WORKER_HEARTBEAT_SECONDS": 1, "WORKER_STALE_SECONDS": 4, "RUN_CHUNK_SENTENCES": 56}  # 2 document pairs a chunk


@pytest.fixture
def chunked(settings, tmp_path) -> dict[str, str]:
    for name, value in CHUNKED.items():
        setattr(settings, name, value)
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.EMBEDDING_CACHE_DIR = tmp_path / "embeddings"
    return {**{k: str(v) for k, v in CHUNKED.items()}, "MEDIA_ROOT": settings.MEDIA_ROOT,
            "EMBEDDING_CACHE_DIR": str(settings.EMBEDDING_CACHE_DIR)}


def _finished(run_id: int, log: Path, timeout: float = 180) -> AlignmentRun:
    wait_for(lambda: run_state(run_id).is_finished, timeout, log, "the run")
    return run_state(run_id)


def test_one_run_is_shared_by_two_workers_and_writes_what_one_process_writes(transactional_db, tmp_path, chunked):
    folder = tmp_path / "broker"
    for name in ("w1", "w2"):
        (tmp_path / name).mkdir()
    project = build_corpus(articles=40)
    with app_broker("filesystem://", folder), \
            running_worker("filesystem://", tmp_path / "w1", folder, env=chunked) as (_, log1), \
            running_worker("filesystem://", tmp_path / "w2", folder, env=chunked) as (_, log2):
        run = alignment_runs.start_run(project, "jaccard", params=PARAMS)
        run = _finished(run.pk, log1)
    assert run.status == Status.SUCCEEDED, run.error
    chunks = run.result["chunks"]
    assert chunks["done"] == chunks["total"] == 20 and len(chunks["workers"]) == 2, chunks  # both workers ran chunks
    expected = clean_run(project)
    assert predictions(run) == expected and run.pair_count == len(expected) > 0


def _killed_mid_chunk(broker_url: str, tmp_path: Path, env: dict, folder: Path | None) -> None:
    project = build_corpus(articles=40)
    with running_worker(broker_url, tmp_path / "w1", folder, env=env) as (worker, log):
        run = alignment_runs.start_run(project, "jaccard", params=PARAMS)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # a chunk running after some are done: kill now
            states = list(RunChunk.objects.filter(run=run).values_list("status", flat=True))
            if states.count(Status.SUCCEEDED) >= 2 and Status.RUNNING in states:
                kill_process(worker)
                break
            time.sleep(0.01)
        else:
            pytest.fail(f"no chunk seen running\n{log.read_text()[-3000:]}")
    states = list(RunChunk.objects.filter(run=run).values_list("status", flat=True))
    assert Status.RUNNING in states and states.count(Status.SUCCEEDED) < len(states)  # killed mid-chunk
    with running_worker(broker_url, tmp_path / "w2", folder, env=env) as (_, log):
        run = _finished(run.pk, log)
    assert run.status == Status.SUCCEEDED, run.error
    assert run.result["chunks"]["done"] == run.result["chunks"]["total"] == 20
    assert max(RunChunk.objects.filter(run=run).values_list("attempts", flat=True)) >= 2  # the lost chunk ran again
    expected = clean_run(project)
    assert predictions(run) == expected and run.pair_count == len(expected) > 0  # exactly one set of results


def test_a_worker_killed_mid_chunk_on_the_filesystem_broker_is_replaced_and_the_run_finishes(transactional_db, tmp_path, chunked):
    folder = tmp_path / "broker"
    for name in ("w1", "w2"):
        (tmp_path / name).mkdir()
    with app_broker("filesystem://", folder):
        _killed_mid_chunk("filesystem://", tmp_path, chunked, folder)


@pytest.mark.services
def test_a_worker_killed_mid_chunk_on_redis_is_replaced_and_the_run_finishes(transactional_db, redis_url, tmp_path, chunked):
    import redis

    redis.Redis.from_url(redis_url).flushdb()
    for name in ("w1", "w2"):
        (tmp_path / name).mkdir()
    with app_broker(redis_url):
        _killed_mid_chunk(redis_url, tmp_path, chunked, None)


def test_cancelling_a_run_mid_way_leaves_no_chunk_running(transactional_db, tmp_path, chunked):
    folder = tmp_path / "broker"
    (tmp_path / "w1").mkdir()
    project = build_corpus(articles=40)
    with app_broker("filesystem://", folder), running_worker("filesystem://", tmp_path / "w1", folder, env=chunked) as (_, log):
        run = alignment_runs.start_run(project, "jaccard", params=PARAMS)
        wait_for(lambda: RunChunk.objects.filter(run=run, status=Status.SUCCEEDED).count() >= 2, 120, log, "two chunks")
        assert progress.cancel(AlignmentRun, run.pk)
        time.sleep(3)  # a running chunk stops at its next check; the rest find the run cancelled
        states = list(RunChunk.objects.filter(run=run).values_list("status", flat=True))
    assert run_state(run.pk).status == Status.CANCELLED
    assert Status.RUNNING not in states and states.count(Status.QUEUED) > 0, states
