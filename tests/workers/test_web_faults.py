"""Fault tests on real services, on the web side: the PostgreSQL connection dropped mid-import, the web
process killed while labels are submitted. Each ends with nothing partly written and nothing lost
(the worker side's faults: test_faults.py).
"""
from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from annotation.models import Status
from tests import factories
from tests.worker_process import kill_process, running_web, wait_for
from tests.workers.test_faults import free_port, sentence

pytestmark = [pytest.mark.slow]


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
    # the driver's own words depend on when the termination reaches it (the server's notice, or the socket closed
    # while reading a reply); what the user is told around them does not
    message = str(error)
    assert message.startswith("the database connection failed during the import (")
    assert message.endswith("); nothing was imported: import the files again")
    assert "terminating connection due to administrator command" in message or "server closed the connection" in message
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
    return running_web(port, log, workers=2)


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
        kill_process(server)  # mid-stream: requests in flight get no answer
        assert len(acknowledged) < pairs, "the annotator finished before the web process was killed"
        killed_after = len(acknowledged)
        server = start_web(port, log)
        client.join(120)
    finally:
        kill_process(server)
    assert not client.is_alive() and not failures, failures
    assert unanswered[0] > 0  # the annotator did meet the dead server
    assert killed_after < len(acknowledged) == pairs  # work went on after the restart, to the end of the queue
    stored = list(Label.objects.filter(annotator=anna).values_list("client_token", "pair_id", "value"))
    assert sorted((str(t), p) for t, p, _ in stored) == sorted(acknowledged.items())  # each exactly once, none extra
    assert {v for _, _, v in stored} == {"aligned"}
