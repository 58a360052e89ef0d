"""The client's objects and errors against a live server (and a real worker on the embedded broker)."""
from __future__ import annotations

import socket
from pathlib import Path

import pytest
from alignapp_client import (
    AlignappError,
    Client,
    Export,
    Forbidden,
    Import,
    Invalid,
    JobFailed,
    NotFound,
    Project,
    Run,
    Unauthorized,
    Unavailable,
)

from annotation.models import Job, Status
from annotation.services.projects.accounts import issue_token
from tests import factories
from tests.client.conftest import Counting

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "annotation" / "fixtures" / "demo_corpus"
RECORD = ('{"id": "Bees", "complex": {"paragraphs": [["Bees are in decline across Europe.", "Farmers worry."]]}, '
          '"simple": {"paragraphs": [["Bees are in decline."]], "level": "simple"}, "gold": [[0, 0]]}\n')
SERVER_CODE = ("annotation.", "workers.", "Error:")


@pytest.mark.services
@pytest.mark.slow
def test_work_objects_wait_with_progress_and_give_one_shape_per_kind(server, settings, tmp_path, capsys):
    url, token, log = server
    client = Client(url, token, poll_interval=0.2)
    project = client.create_project("Client test")
    assert isinstance(project, Project) and project["name"] == "Client test" and project.get("role") == "researcher"
    corpus = tmp_path / "bees.jsonl"
    corpus.write_text(RECORD)

    now = project.import_file(corpus, format="jsonl")
    settings.IMPORT_BACKGROUND_BYTES = 10  # the same file into another project, as a background job
    later = client.create_project("Later").import_file(corpus, format="jsonl")
    assert isinstance(now, Import) and now.done and not later.done and later.id is not None
    counts, background = now.wait(), later.wait(timeout=60, progress=False)
    assert background == counts and counts["articles"] == 1 and counts["summary"].startswith("1 articles"), counts

    run = project.runs.create("jaccard")
    assert isinstance(run, Run) and run.status == "queued"
    assert run.wait(timeout=60) is run and run["status"] == "succeeded" and run.pair_count > 0
    assert run.data["scores"] is None  # the polls asked for no scores (?scores=0): computed only when asked
    assert run.scores()["available"] is False and run.data["scores"]["reason"]  # no exhaustive gold here: why not
    assert f"run #{run.id}: 100%" in capsys.readouterr().err  # the tqdm bar
    assert [r.id for r in project.runs] == [run.id] and project.runs.get(run.id).pair_count == run.pair_count

    export = project.exports.create(kind="auto", runs=[run.id], formats=["jsonl"], lock=False)
    archive = export.download(tmp_path / "new" / "folder")
    assert isinstance(export, Export) and archive == tmp_path / "new" / "folder" / f"export-{export.id}.zip"
    assert archive.stat().st_size > 0 and export.download(tmp_path / "named.zip").is_file()
    assert [e.id for e in project.exports] == [export.id]


@pytest.mark.services
@pytest.mark.slow
def test_a_failed_background_import_says_what_is_wrong_without_server_names(server, settings, tmp_path):
    url, token, log = server
    project = Client(url, token, poll_interval=0.2).create_project("Refused")
    settings.IMPORT_BACKGROUND_BYTES = 10
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "complex": {"text": "A sentence."}}\n{not json\n')
    job = project.import_file(bad, format="jsonl")
    with pytest.raises(JobFailed) as failed:
        job.wait(timeout=60, progress=False)
    message, stored = str(failed.value), Job.objects.get(pk=job.id).error
    assert failed.value.status == "failed" and "bad.jsonl:1" in message and "bad.jsonl:1" in stored, message
    assert not any(name in text for name in SERVER_CODE for text in (message, stored)), (message, stored)
    assert any("bad.jsonl:1" in p for p in failed.value.problems)
    assert Job.objects.get(pk=job.id).status == Status.FAILED


@pytest.mark.services
def test_refusals_raise_typed_errors_with_the_servers_message(live_server, researcher):
    user, token = researcher
    factories.make_user("ann")
    project = factories.make_project("Refusals", rita="researcher", ann="annotator")
    client = Client(live_server.url, token)
    with pytest.raises(Invalid, match="unknown method 'magic'") as refused:
        client.project(project.pk).runs.create("magic")
    assert refused.value.status == 400 and any("magic" in p for p in refused.value.problems)
    assert refused.value.code == "unknown_method" and "code:" not in str(refused.value)
    with pytest.raises(NotFound) as missing:
        client.project(999999)
    assert missing.value.status == 404 and isinstance(missing.value, AlignappError)
    with pytest.raises(Unauthorized, match="Invalid token|credentials") as wrong:
        next(Client(live_server.url, "not-a-token").projects())
    assert wrong.value.status == 401 and not isinstance(wrong.value, Forbidden)
    annotator = Client(live_server.url, issue_token(user.__class__.objects.get(username="ann")).key)
    with pytest.raises(Forbidden, match="researchers"):
        try:
            annotator.align(project.pk, "jaccard")
        except Unauthorized:  # a handler for a bad token does not catch a refused role
            pytest.fail("Forbidden caught as Unauthorized")
    with pytest.raises(Unauthorized, match="username and password"):
        Client.login(live_server.url, "rita", "not-her-password")
    assert next(Client.login(live_server.url, "rita", "pw-rita").projects()).name == "Refusals"


def test_a_server_that_does_not_answer_is_unavailable_after_retrying_gets():
    with socket.socket() as free:  # a port nobody listens on
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    transport = Counting()
    client = Client(f"http://127.0.0.1:{port}", "token", retries=2, transport=transport)
    client.http.backoff = 0.01
    with pytest.raises(Unavailable, match=f"127.0.0.1:{port} did not answer GET"):
        client.project(1)
    assert len(transport.requests) == 3  # a GET is tried again
    with pytest.raises(Unavailable):
        client.create_project("x")
    assert len(transport.requests) == 4  # a POST is sent once
