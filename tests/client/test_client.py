"""The Python client (``client/``) against a live server and a real worker on the embedded broker."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from alignapp_client import AlignappError, Client, JobFailed

from annotation.models import Job, Label, Status
from annotation.services.projects.accounts import issue_token
from tests import factories
from tests.worker_process import app_broker, running_worker

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "client" / "examples" / "notebook.py"
DEMO = ROOT / "annotation" / "fixtures" / "demo_corpus"


@pytest.fixture
def researcher(transactional_db):
    user = factories.make_user("rita", researcher=True)
    return user, issue_token(user).key


@pytest.fixture
def server(live_server, researcher, settings, tmp_path):
    """``(url, token)``: the live server, a worker on the filesystem broker sharing its media folder."""
    media = tmp_path / "media"
    settings.MEDIA_ROOT = media
    folder = tmp_path / "broker"
    with app_broker("filesystem://", folder), running_worker("filesystem://", tmp_path, folder,
                                                            env={"MEDIA_ROOT": str(media)}) as (_, log):
        yield live_server.url, researcher[1], log


@pytest.mark.services
@pytest.mark.slow
def test_the_example_notebook_runs_end_to_end_against_a_live_server(server):
    url, token, log = server
    env = {**os.environ, "ALIGNAPP_URL": url, "ALIGNAPP_TOKEN": token, "PYTHONPATH": str(ROOT / "client")}
    done = subprocess.run([sys.executable, str(NOTEBOOK)], capture_output=True, text=True, env=env, timeout=300,
                          cwd=str(ROOT / "client"))
    assert done.returncode == 0, done.stdout + done.stderr + log.read_text(errors="replace")[-3000:]
    assert "{'articles': 4, 'documents': 12" in done.stdout
    assert "labelled 6 pairs" in done.stdout and "6 votes, 6 gold pairs" in done.stdout, done.stdout
    assert Label.objects.count() == 6
    assert "run #" in done.stderr and "100%" in done.stderr  # the progress bars of wait()


@pytest.mark.services
@pytest.mark.slow
def test_handles_show_progress_and_raise_the_servers_message_on_failure(server, settings, tmp_path, capsys):
    url, token, log = server
    client = Client(url, token, poll_interval=0.2)
    project = client.create_project("Client test")
    assert [p["name"] for p in client.projects()] == ["Client test"] and client.project(project)["role"] == "researcher"

    imported = client.import_corpus(project["id"], DEMO, format="levels")
    assert imported.done and imported.wait()["articles"] == 4 and imported.summary["documents"] == 12

    run = client.align(project, "jaccard")
    assert run.status == "queued" and run.id is not None
    final = run.wait(timeout=120)
    assert final["status"] == "succeeded" and run.pair_count > 0 and run.done
    assert f"run #{run.id}: 100%" in capsys.readouterr().err  # the tqdm bar

    export = client.export(project, kind="auto", runs=[run.id], formats=["jsonl"], lock=False)
    export.wait(timeout=120, progress=False)
    archive = export.download(tmp_path)
    assert archive.name == f"export-{export.id}.zip" and archive.stat().st_size > 0
    assert export.data["pairs"] > 0

    settings.IMPORT_BACKGROUND_BYTES = 10  # a background import job, refused by the worker
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "complex": {"text": "A sentence."}}\n{not json\n')
    handle = client.import_corpus(project, bad, format="jsonl")
    assert not handle.done and handle.kind == "import"
    with pytest.raises(JobFailed) as failed:
        handle.wait(timeout=120, progress=False)
    assert failed.value.status == "failed" and "bad.jsonl:1" in str(failed.value), str(failed.value)
    assert Job.objects.get(pk=handle.id).status == Status.FAILED


@pytest.mark.services
def test_refused_requests_raise_the_servers_message(live_server, researcher):
    user, token = researcher
    project = factories.make_project("Refusals", rita="researcher")
    client = Client(live_server.url, token)
    with pytest.raises(AlignappError, match="unknown method 'magic'") as refused:
        client.align(project.pk, "magic")
    assert refused.value.status == 400
    with pytest.raises(AlignappError) as missing:
        client.project(999999)
    assert missing.value.status == 404
    with pytest.raises(AlignappError, match="Invalid token|credentials"):
        Client(live_server.url, "not-a-token").projects()
    assert Client.login(live_server.url, "rita", "pw-rita").projects()[0]["name"] == "Refusals"
