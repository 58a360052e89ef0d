"""Fault tests on real services, on the worker side: a worker SIGKILLed mid-run or mid-training
(filesystem broker and Redis), Redis restarted during a run. Each ends with exactly one set of results
and nothing lost (the web side's faults: test_web_faults.py).

Liveness is shortened for these tests (heartbeat 1 s, lost after 4 s; chunks of 2 document pairs)
in this process and in the workers, so a lost worker is noticed within seconds.
"""
from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from annotation.models import AlignmentRun, Prediction, Status
from annotation.services.alignment import alignment_runs
from tests import factories
from tests.engine.conftest import minilm_path  # noqa: F401 - fixtures of the tiny-BERT builder
from tests.engine.test_training import tiny_base  # noqa: F401
from tests.worker_process import app_broker, kill_process, running_worker, wait_for

pytestmark = [pytest.mark.slow]

LIVENESS = {"WORKER_HEARTBEAT_SECONDS": 1, "WORKER_STALE_SECONDS": 4,
            "RUN_CHUNK_SENTENCES": 56}  # chunks of 2 document pairs (14 + 14 sentences each)
WORDS = ("river bridge council school storm farmer market doctor study water city forest train museum "
         "election winter harvest teacher village factory scientist coast island road festival").split()


@pytest.fixture
def liveness(settings, tmp_path, monkeypatch) -> dict[str, str]:
    """Short liveness settings here; returns the same as environment for the workers (and a shared
    MEDIA_ROOT)."""
    for name, value in LIVENESS.items():
        setattr(settings, name, value)
    settings.MEDIA_ROOT = str(tmp_path / "media")
    return {**{k: str(v) for k, v in LIVENESS.items()}, "MEDIA_ROOT": settings.MEDIA_ROOT}


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def build_corpus(articles: int = 60, sentences: int = 14):
    """A project of ``articles`` articles, each a complex and a simple version of ``sentences``
    sentences (the simple one: shortened, reordered in places)."""
    factories.make_user("rita", researcher=True)
    project = factories.make_project("Faults", rita="researcher")
    rng = random.Random(7)
    for a in range(articles):
        complex_side = [sentence(rng, rng.randint(8, 16)) for _ in range(sentences)]
        simple_side = [" ".join(s.split()[: max(4, len(s.split()) // 2)]) + "." for s in complex_side]
        rng.shuffle(simple_side[: sentences // 3])
        half = sentences // 2
        factories.make_article(project, f"Article {a:03d}", {"adv": [complex_side[:half], complex_side[half:]],
                                                            "ele": [simple_side[:half], simple_side[half:]]})
    return project


PARAMS = {"access_attributes": False}


def predictions(run: AlignmentRun) -> set[tuple]:
    return set(Prediction.objects.filter(run=run).values_list("pair_id", "predicted_label", "score", "rank"))


def clean_run(project) -> set[tuple]:
    """The pairs an uninterrupted run of the same method produces (run here, in this process)."""
    run = alignment_runs.start_run(project, "jaccard", params=PARAMS, enqueue=False)
    alignment_runs.execute_run(run.pk)
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED, run.error
    return predictions(run)


def run_state(run_id: int) -> AlignmentRun:
    return AlignmentRun.objects.get(pk=run_id)


def killed_mid_run_then_resumed(broker_url: str, tmp_path: Path, env: dict, folder: Path | None) -> None:
    project = build_corpus()
    with running_worker(broker_url, tmp_path / "w1", folder, env=env) as (worker, log):
        run = alignment_runs.start_run(project, "jaccard", params=PARAMS)  # queued (on commit: now)
        wait_for(lambda: run_state(run.pk).articles_done >= 4, 120, log, "the first chunks")
        kill_process(worker)  # mid-run: no chance to mark anything
    run.refresh_from_db()
    assert run.status == Status.RUNNING and 4 <= run.articles_done < run.articles_total == 60, (run.status, run.articles_done)
    killed_at = run.articles_done
    with running_worker(broker_url, tmp_path / "w2", folder, env=env) as (_, log):
        wait_for(lambda: run_state(run.pk).is_finished, 120, log, "the resumed run")
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED, run.error
    # issue 20: a run is chunks; the new worker ran those not done (the chunk its predecessor was killed
    # in is re-queued by the liveness sweep; chunk messages lost with the worker by the run's re-queue)
    chunks = run.result["chunks"]
    assert chunks["done"] == chunks["total"] and killed_at >= 4
    assert run.articles_done == run.articles_total == 60
    expected = clean_run(project)
    assert predictions(run) == expected and run.pair_count == len(expected) > 0  # exactly one set of results


def test_a_worker_killed_mid_run_is_replaced_and_the_run_resumes_on_the_filesystem_broker(transactional_db, tmp_path, liveness):
    folder = tmp_path / "broker"
    for name in ("w1", "w2"):
        (tmp_path / name).mkdir()
    with app_broker("filesystem://", folder):
        killed_mid_run_then_resumed("filesystem://", tmp_path, liveness, folder)


@pytest.mark.services
def test_a_worker_killed_mid_run_is_replaced_and_the_run_resumes_on_redis(transactional_db, redis_url, tmp_path, liveness):
    import redis

    redis.Redis.from_url(redis_url).flushdb()
    for name in ("w1", "w2"):
        (tmp_path / name).mkdir()
    with app_broker(redis_url):
        killed_mid_run_then_resumed(redis_url, tmp_path, liveness, None)


@pytest.mark.services
def test_a_run_whose_database_connection_drops_is_retried_and_resumes(postgres_db, tmp_path, liveness):
    from django.db import connection

    folder = tmp_path / "broker"
    project = build_corpus()
    with app_broker("filesystem://", folder), running_worker("filesystem://", tmp_path, folder, env=liveness) as (_, log):
        run = alignment_runs.start_run(project, "jaccard", params=PARAMS)
        wait_for(lambda: run_state(run.pk).articles_done >= 4, 120, log, "the first chunks")
        terminated, deadline = 0, time.monotonic() + 30
        while not terminated and time.monotonic() < deadline:  # chunks are short tasks: catch one connected
            with connection.cursor() as cursor:  # every connection of the worker (its task, its heartbeat) ends
                cursor.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                               "WHERE datname = current_database() AND pid <> pg_backend_pid()")
                terminated = cursor.fetchone()[0]
            time.sleep(0.01)
        assert terminated >= 1
        assert run_state(run.pk).articles_done < 60
        wait_for(lambda: run_state(run.pk).is_finished, 120, log, "the retried run")
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED, run.error
    # Celery's retry (or the liveness sweep) ran the interrupted chunk again; the done ones were kept
    assert run.result["chunks"]["done"] == run.result["chunks"]["total"]
    expected = clean_run(project)
    assert predictions(run) == expected and run.pair_count == len(expected) > 0


# --- a worker killed mid-training ----------------------------------------------------------------

TRAIN = {"epochs": 2, "patience": 2, "crf_epochs": 5, "base_similarity": "charngram", "max_length": 64}


def training_project(encoder: str):
    """Articles with gold from the engine's structured cases (train/dev/test splits), the tiny
    BERT as encoder."""
    import json

    from annotation.models import Article, Split
    from annotation.services.corpus.importing import import_files
    from tests.engine.cases import structured_cases
    from tests.engine.test_training import record

    factories.make_user("rita", researcher=True)
    project = factories.make_project("Training faults", rita="researcher")
    project.config = {"encoder": encoder}
    project.save()
    jsonl = "".join(json.dumps({**record(p), "id": f"case-{p.id}"}) + "\n" for p in structured_cases()).encode()
    import_files(project, [("cases.jsonl", jsonl)], "jsonl", gold_meaning="exhaustive")  # complete article pairs
    for i, article in enumerate(Article.objects.filter(project=project).order_by("id")):
        Split.objects.create(article=article, name="dev" if i == 1 else "test" if i == 2 else "train")
    return project


def killed_mid_training_then_resumed(broker_url: str, tmp_path: Path, env: dict, folder: Path | None, encoder: str) -> None:
    from annotation.models import Job, ModelVersion
    from annotation.services.training.request import TrainRequest
    from annotation.services.training.versions import start_training

    project = training_project(encoder)
    env = {**env, "MODEL_ROOTS": str(Path(encoder).parent)}  # the tiny encoder's folder is an allowed model root
    with running_worker(broker_url, tmp_path / "w1", folder, env=env) as (worker, log):
        job = start_training(project, TrainRequest.parse({"config": TRAIN, "seed": 1}))
        wait_for(lambda: Job.objects.get(pk=job.pk).checkpoint.get("epoch", 0) >= 1, 180, log, "a first epoch")
        kill_process(worker)
    job.refresh_from_db()
    assert job.status == Status.RUNNING and job.checkpoint["stage"] == "pair_model", (job.status, job.checkpoint)
    with running_worker(broker_url, tmp_path / "w2", folder, env=env) as (_, log):
        wait_for(lambda: Job.objects.get(pk=job.pk).is_finished, 300, log, "the re-queued training")
    job.refresh_from_db()
    assert job.status == Status.SUCCEEDED, job.error
    assert job.attempts == 2 and job.checkpoint["lost_workers"] == 1
    version = ModelVersion.objects.get(job=job)  # exactly one version for the job ...
    assert list(ModelVersion.objects.filter(project=project)) == [version]  # ... and none other
    assert job.result["model_version"] == version.pk and version.metrics["dev"]
    versions_dir = Path(version.path).parent
    assert [p.name for p in versions_dir.iterdir()] == [version.name]  # the lost attempt left no directory behind


def test_a_worker_killed_mid_training_is_replaced_and_one_model_version_results(transactional_db, tmp_path, liveness,
                                                                               tiny_base):  # noqa: F811
    folder = tmp_path / "broker"
    for name in ("w1", "w2"):
        (tmp_path / name).mkdir()
    with app_broker("filesystem://", folder):
        killed_mid_training_then_resumed("filesystem://", tmp_path, liveness, folder, tiny_base)


@pytest.mark.services
def test_a_worker_killed_mid_training_on_redis_is_replaced_and_one_model_version_results(
        transactional_db, redis_url, tmp_path, liveness, tiny_base):  # noqa: F811
    import redis

    redis.Redis.from_url(redis_url).flushdb()
    for name in ("w1", "w2"):
        (tmp_path / name).mkdir()
    with app_broker(redis_url):
        killed_mid_training_then_resumed(redis_url, tmp_path, liveness, None, tiny_base)


# --- Redis restarted during a run -----------------------------------------------------------------

def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis(port: int, folder: Path):
    """A private redis-server (no persistence: a restart loses every message, the worst case)."""
    import shutil
    import subprocess

    import redis

    binary = shutil.which("redis-server")
    if binary is None:
        from tests.conftest import require_service

        require_service("redis-server not installed (the Redis restart test runs its own)")
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                "--dir", str(folder)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                               start_new_session=True)
    wait_for(lambda: _pings(redis, port), 20, what=f"redis-server on port {port}")
    return process


def _pings(redis, port: int) -> bool:
    try:
        return bool(redis.Redis(port=port, socket_connect_timeout=0.5).ping())
    except redis.RedisError:
        return False


@pytest.mark.services
def test_a_run_goes_on_when_redis_restarts_under_it_and_the_worker_reconnects(transactional_db, tmp_path, liveness):
    from annotation.models import Job
    from annotation.services.background.jobs import start_job

    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    server = start_redis(port, tmp_path)
    try:
        project = build_corpus(articles=120)
        with app_broker(url), running_worker(url, tmp_path, env=liveness) as (_, log):
            run = alignment_runs.start_run(project, "jaccard", params=PARAMS)
            wait_for(lambda: run_state(run.pk).articles_done >= 4, 120, log, "the first chunks")
            kill_process(server)  # Redis dies mid-run (its messages with it) ...
            assert run_state(run.pk).articles_done < 120
            time.sleep(2)
            server = start_redis(port, tmp_path)  # ... and comes back empty
            wait_for(lambda: run_state(run.pk).is_finished, 120, log, "the run")
            run.refresh_from_db()
            # chunk messages lost with Redis: the silent run was re-queued and its plan re-sent them
            assert run.status == Status.SUCCEEDED, run.error
            # the worker consumes again from the restarted Redis
            job = start_job(project, "corpus-stats")
            wait_for(lambda: Job.objects.get(pk=job.pk).is_finished, 90, log, "a job sent after the restart")
            assert Job.objects.get(pk=job.pk).status == Status.SUCCEEDED
        expected = clean_run(project)
        assert predictions(run) == expected and run.pair_count == len(expected) > 0
    finally:
        kill_process(server)
