"""Fault tests on real services: a worker SIGKILLed mid-run or mid-training (filesystem broker and
Redis), Redis restarted during a run, the PostgreSQL connection dropped mid-import, the web process
killed while labels are submitted. Each ends with exactly one set of results and nothing lost.

Liveness is shortened for these tests (heartbeat 1 s, lost after 4 s; chunks of 2 document pairs)
in this process and in the workers, so a lost worker is noticed within seconds.
"""
from __future__ import annotations

import os
import random
import signal
import time
from pathlib import Path

import pytest

from annotation.models import AlignmentRun, Prediction, Status
from annotation.services.alignment import alignment_runs
from tests import factories
from tests.engine.conftest import minilm_path  # noqa: F401 - fixtures of the tiny-BERT builder
from tests.engine.test_training import tiny_base  # noqa: F401
from tests.worker_process import app_broker, running_worker, wait_for

pytestmark = [pytest.mark.slow]

LIVENESS = {"WORKER_HEARTBEAT_SECONDS": 1, "WORKER_STALE_SECONDS": 4, "ALIGN_BATCH_ARTICLES": 2,
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


def kill(process) -> None:
    """SIGKILL the process and its children (no chance to clean up)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def run_state(run_id: int) -> AlignmentRun:
    return AlignmentRun.objects.get(pk=run_id)


def killed_mid_run_then_resumed(broker_url: str, tmp_path: Path, env: dict, folder: Path | None) -> None:
    project = build_corpus()
    with running_worker(broker_url, tmp_path / "w1", folder, env=env) as (worker, log):
        run = alignment_runs.start_run(project, "jaccard", params=PARAMS)  # queued (on commit: now)
        wait_for(lambda: run_state(run.pk).articles_done >= 4, 120, log, "the first chunks")
        kill(worker)  # mid-run: no chance to mark anything
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
    from annotation.services.training.versions import start_training

    project = training_project(encoder)
    env = {**env, "MODEL_ROOTS": str(Path(encoder).parent)}  # the tiny encoder's folder is an allowed model root
    with running_worker(broker_url, tmp_path / "w1", folder, env=env) as (worker, log):
        job = start_training(project, config=TRAIN, seed=1)
        wait_for(lambda: Job.objects.get(pk=job.pk).checkpoint.get("epoch", 0) >= 1, 180, log, "a first epoch")
        kill(worker)
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
            kill(server)  # Redis dies mid-run (its messages with it) ...
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
        kill(server)


# --- the PostgreSQL connection dropped mid-import ---------------------------------------------------

def big_jsonl(articles: int, sentences: int = 12) -> bytes:
    import json

    rng = random.Random(11)
    lines = []
    for a in range(articles):
        complex_side = [sentence(rng, rng.randint(8, 14)) for _ in range(sentences)]
        simple_side = [" ".join(s.split()[:5]) + "." for s in complex_side]
        lines.append(json.dumps({"id": f"import-{a:05d}", "complex": {"paragraphs": [complex_side]},
                                 "simple": {"paragraphs": [simple_side]}, "gold": [[i, i] for i in range(0, sentences, 3)]}))
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.services
def test_a_database_connection_dropped_mid_import_leaves_nothing_partly_imported(postgres_db):
    import threading

    from django.db import connection, connections

    from annotation.models import Article, Sentence
    from annotation.services.corpus.importing import CorpusImportError, import_files
    from tests.annotation.services.conftest import corpus_counts

    project = factories.make_project("Import faults")
    factories.make_article(project, "Already here", {"adv": [["One sentence."]], "ele": [["One."]]})
    before = corpus_counts()
    data = big_jsonl(3000)
    outcome: dict = {}

    def importer() -> None:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                outcome["pid"] = cursor.fetchone()[0]
            outcome["result"] = import_files(project, [("big.jsonl", data)], "jsonl")
        except Exception as exc:  # noqa: BLE001 - what the caller sees is the point of the test
            outcome["error"] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=importer)
    thread.start()

    def writing() -> bool:  # the import's transaction has written rows (it holds a transaction id)
        with connection.cursor() as cursor:
            cursor.execute("SELECT backend_xid IS NOT NULL FROM pg_stat_activity WHERE pid = %s", [outcome.get("pid", -1)])
            row = cursor.fetchone()
        return bool(row and row[0]) or not thread.is_alive()

    wait_for(writing, 120, what="the import's transaction to write")
    assert thread.is_alive(), f"the import ended before the connection could be dropped: {outcome}"
    with connection.cursor() as cursor:  # an administrator (or a failover) ends the import's connection
        cursor.execute("SELECT pg_terminate_backend(%s)", [outcome["pid"]])
    thread.join(120)
    assert "result" not in outcome, "the import went through although its connection was dropped"
    error = outcome["error"]
    assert isinstance(error, CorpusImportError), repr(error)
    assert str(error) == ("the database connection failed during the import (terminating connection due to "
                          "administrator command); nothing was imported: import the files again")
    connections.close_all()
    assert corpus_counts() == before  # nothing partly imported
    assert not Article.objects.filter(title__startswith="import-").exists()
    assert Sentence.objects.count() == before["sentences"]


# --- the web process killed while labels are submitted ----------------------------------------------

def queue_project(pairs: int):
    """A project whose queue serves ``pairs`` sentence pairs to the annotator anna (no QC pauses)."""
    from annotation.models import AlignmentRun, CandidatePair, PairSentence, Prediction, Sentence, Side

    factories.make_user("anna")
    project = factories.make_project("Web faults", anna="annotator")
    project.config = {"qc": {"overlap": 1, "min_seconds": 0, "test_every": 0}}
    project.save()
    article = factories.make_article(project, "Submits", {
        "adv": [[f"The council in district {i} approved plan {i} after a long debate." for i in range(pairs)]],
        "ele": [[f"District {i} agreed to plan {i}." for i in range(pairs)]]})
    complex_doc, simple_doc = article.documents.order_by("rank")
    run = AlignmentRun.objects.create(project=project, method="tfidf", status=Status.SUCCEEDED)
    made = CandidatePair.objects.bulk_create([
        CandidatePair(article=article, complex_document=complex_doc, simple_document=simple_doc, complex_key=str(i),
                      simple_key=str(i), score=0.8, predicted_label="aligned") for i in range(pairs)])
    Prediction.objects.bulk_create([Prediction(run=run, pair=p, score=0.8, predicted_label="aligned") for p in made])
    ids = {(s.document_id, s.index): s.pk for s in Sentence.objects.filter(document__article=article)}
    PairSentence.objects.bulk_create(
        [PairSentence(pair=p, sentence_id=ids[(complex_doc.pk, i)], side=Side.COMPLEX) for i, p in enumerate(made)]
        + [PairSentence(pair=p, sentence_id=ids[(simple_doc.pk, i)], side=Side.SIMPLE) for i, p in enumerate(made)])
    return project


def start_web(port: int, log: Path):
    """gunicorn (2 workers) on the test database, as in production; waits for /healthz."""
    import subprocess
    import sys

    import requests
    from django.conf import settings

    from tests.worker_process import database_url

    env = {**os.environ, "DATABASE_URL": database_url(), "LOG_LEVEL": "WARNING"}
    gunicorn = Path(sys.executable).with_name("gunicorn")
    server = subprocess.Popen([str(gunicorn), "alignapp.wsgi:application", "--bind", f"127.0.0.1:{port}", "--workers", "2"],
                              cwd=settings.BASE_DIR, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT,
                              start_new_session=True)

    def up() -> bool:
        try:
            return requests.get(f"http://127.0.0.1:{port}/healthz", timeout=1).ok
        except requests.RequestException:
            return server.poll() is not None  # died: wait_for ends, the check below says so

    wait_for(up, 60, log, "the web server")
    assert server.poll() is None, log.read_text()[-3000:]
    return server


@pytest.mark.services
def test_killing_the_web_process_during_submits_loses_no_acknowledged_label(postgres_db, tmp_path):
    import threading
    import uuid

    import requests
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from annotation.models import Label

    pairs = 60
    project = queue_project(pairs)
    anna = get_user_model().objects.get(username="anna")
    token = Token.objects.create(user=anna).key
    port, log = free_port(), tmp_path / "web.log"
    server = start_web(port, log)
    acknowledged: dict[str, int] = {}  # client_token → pair, for every 2xx
    failures: list[str] = []
    unanswered = [0]  # submits the dead server never answered
    api = f"http://127.0.0.1:{port}/api/projects/{project.pk}/queue/"

    def annotator() -> None:
        """What the labelling page does: submit, take the next item; when the server is gone, keep
        the unacknowledged label and send it again (same client_token) until it is acknowledged."""
        session = requests.Session()
        session.headers["Authorization"] = f"Token {token}"
        item, pending = None, None
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if pending is None:
                    item = item or session.get(api + "next/", timeout=10).json()["item"]
                    if item is None:
                        return  # the queue is done
                    pending = {"pair": item["pair"], "value": "aligned", "seconds": 2.0, "client_token": str(uuid.uuid4())}
                response = session.post(api + "submit/", json=pending, timeout=10)
            except requests.RequestException:
                unanswered[0] += 1
                time.sleep(0.2)  # the server is down: try again, same label, same token
                continue
            if response.status_code not in (200, 201):
                failures.append(f"{response.status_code}: {response.text[:300]}")
                return
            acknowledged[pending["client_token"]] = pending["pair"]
            item, pending = response.json()["item"], None
        failures.append("the annotator did not finish within 90 s")

    client = threading.Thread(target=annotator)
    client.start()
    try:
        wait_for(lambda: len(acknowledged) >= 15 or not client.is_alive(), 60, log, "the first labels")
        kill(server)  # mid-stream: requests in flight get no answer
        assert len(acknowledged) < pairs, "the annotator finished before the web process was killed"
        killed_after = len(acknowledged)
        server = start_web(port, log)
        client.join(120)
    finally:
        kill(server)
    assert not client.is_alive() and not failures, failures
    assert unanswered[0] > 0  # the annotator did meet the dead server
    assert killed_after < len(acknowledged) == pairs  # work went on after the restart, to the end of the queue
    stored = list(Label.objects.filter(annotator=anna).values_list("client_token", "pair_id", "value"))
    assert sorted((str(t), p) for t, p, _ in stored) == sorted(acknowledged.items())  # each exactly once, none extra
    assert {v for _, _, v in stored} == {"aligned"}
