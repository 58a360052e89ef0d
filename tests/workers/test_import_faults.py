"""Issue 19 item 1 on real processes: the web process (gunicorn) SIGKILLed mid synchronous import and
mid-upload, a Celery worker SIGKILLed mid background import. After a restart and a liveness sweep the
project holds nothing of the import or all of it, the same upload can be imported again, and
``IMPORT_DIR`` holds nothing stale. Runs on the embedded default (SQLite, filesystem broker) and on
PostgreSQL (``DATABASE_URL``). Liveness is shortened (heartbeat 1 s, lost after 3 s, staged files
stale after 1 s) here and in the subprocesses.
"""
from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from annotation.models import Article, Job, Status
from annotation.services.background import liveness
from annotation.services.corpus.importing import ImportRequest
from tests import factories
from tests.worker_process import app_broker, kill_process, running_web, running_worker, wait_for
from tests.workers.test_faults import free_port
from tests.workers.test_web_faults import big_jsonl

pytestmark = [pytest.mark.slow]

ARTICLES = 2500  # about 2.4 MB: a synchronous import of several seconds, so the kill lands mid-import
SHORT = {"WORKER_HEARTBEAT_SECONDS": 1, "WORKER_STALE_SECONDS": 3, "IMPORT_STALE_SECONDS": 1}


@pytest.fixture
def env(settings, tmp_path) -> dict[str, str]:
    """Short liveness and a private IMPORT_DIR here; the same as environment for the subprocesses."""
    imports = tmp_path / "imports"
    imports.mkdir()
    for name, value in SHORT.items():
        setattr(settings, name, value)
    settings.IMPORT_DIR = imports
    settings.FILE_UPLOAD_TEMP_DIR = str(imports)
    return {**{k: str(v) for k, v in SHORT.items()}, "IMPORT_DIR": str(imports)}


def researcher_project():
    from rest_framework.authtoken.models import Token

    rita = factories.make_user("rita", researcher=True)
    project = factories.make_project("Import faults", rita="researcher")
    return project, Token.objects.create(user=rita).key


def start_web(port: int, log: Path, env: dict[str, str]):
    """gunicorn (1 worker) on the test database; imports done now (no background jobs)."""
    return running_web(port, log, workers=1, env={"IMPORT_BACKGROUND_BYTES": str(10**9), **env},
                       args=("--timeout", "120"))


def upload(port: int, project, token: str, data: bytes):
    import requests

    return requests.post(f"http://127.0.0.1:{port}/api/projects/{project.pk}/import/",
                         files={"files": ("big.jsonl", data)}, data={"format": "jsonl"},
                         headers={"Authorization": f"Token {token}"}, timeout=120)


def articles(project) -> int:
    return Article.objects.filter(project=project).count()


def writing() -> bool:
    """An import job is in its write phase (a batch written on SQLite, rows sent on PostgreSQL)."""
    return Job.objects.filter(kind="import", status=Status.RUNNING, message__startswith="written").exists()


def swept(imports: Path) -> list[str]:
    time.sleep(SHORT["WORKER_STALE_SECONDS"] + 1)  # the dead process's heartbeat and files are stale now
    liveness.reap_stale()
    return sorted(p.name for p in imports.iterdir())


def test_the_web_process_killed_mid_synchronous_import_leaves_nothing_and_the_upload_can_be_retried(
        transactional_db, tmp_path, env):
    project, token = researcher_project()
    data = big_jsonl(ARTICLES)
    imports = Path(env["IMPORT_DIR"])
    port, log = free_port(), tmp_path / "web.log"
    server = start_web(port, log, env)
    try:
        answers: list = []
        client = threading.Thread(target=lambda: answers.append(_try(upload, port, project, token, data)))
        client.start()
        wait_for(lambda: writing() or not client.is_alive(), 120, log, "the import's write phase")
        assert client.is_alive(), f"the import ended before the kill: {answers}"
        kill_process(server)  # mid-import: no chance to undo anything
        client.join(30)
        job = Job.objects.get(kind="import")
        assert job.status == Status.RUNNING and articles(project) < ARTICLES
        assert any(p.name.startswith("upload-") for p in imports.iterdir())  # the staged upload is left behind
        server = start_web(port, log, env)
        assert swept(imports) == []  # the staged upload and work folder of the dead request are gone
        job.refresh_from_db()
        assert job.status == Status.FAILED, job.message
        assert articles(project) == 0  # nothing of the import
        response = upload(port, project, token, data)  # the same upload again
        assert response.status_code == 201, response.text[:2000]
        assert response.json()["articles"] == articles(project) == ARTICLES
        assert list(imports.iterdir()) == []
    finally:
        kill_process(server)


def test_the_web_process_killed_mid_upload_leaves_no_file_and_the_upload_can_be_retried(transactional_db, tmp_path, env):
    project, token = researcher_project()
    data = big_jsonl(ARTICLES // 5)
    imports = Path(env["IMPORT_DIR"])
    port, log = free_port(), tmp_path / "web.log"
    server = start_web(port, log, env)
    try:
        boundary = "crashsafeboundary"
        head = (f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="big.jsonl"\r\n'
                "Content-Type: application/octet-stream\r\n\r\n").encode()
        body = head + data + f"\r\n--{boundary}--\r\n".encode()
        request = (f"POST /api/projects/{project.pk}/import/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   f"Authorization: Token {token}\r\nContent-Type: multipart/form-data; boundary={boundary}\r\n"
                   f"Content-Length: {len(body)}\r\n\r\n").encode()
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(request + body[: len(body) // 2])  # half the upload, then the server dies
            wait_for(lambda: any(p.name.startswith("tmp") for p in imports.iterdir()), 30, log, "the upload's spool file")
            kill_process(server)
        assert [p.name for p in imports.iterdir() if p.name.startswith("tmp") and ".upload" in p.name]
        server = start_web(port, log, env)
        assert swept(imports) == []
        assert articles(project) == 0 and not Job.objects.exists()
        response = upload(port, project, token, data)
        assert response.status_code == 201, response.text[:2000]
        assert response.json()["articles"] == articles(project) == ARTICLES // 5
        assert list(imports.iterdir()) == []
    finally:
        kill_process(server)


def test_a_worker_killed_mid_background_import_is_replaced_and_the_import_is_all_there(transactional_db, tmp_path, env):
    from annotation.services.corpus.importing import uploads
    from tests.workers.test_import_worker import MemoryUpload

    project, _ = researcher_project()
    imports = Path(env["IMPORT_DIR"])
    folder = tmp_path / "broker"
    for name in ("w1", "w2"):
        (tmp_path / name).mkdir()
    with app_broker("filesystem://", folder):
        with running_worker("filesystem://", tmp_path / "w1", folder, env=env) as (worker, log):
            staged = uploads.stage_uploads([MemoryUpload("big.jsonl", big_jsonl(ARTICLES))])
            job = uploads.start_import_job(project, staged, ImportRequest())  # queued once its row is committed
            wait_for(lambda: writing() or Job.objects.get(pk=job.pk).is_finished, 120, log, "the write phase")
            kill_process(worker)
        job.refresh_from_db()
        assert job.status == Status.RUNNING and articles(project) < ARTICLES
        with running_worker("filesystem://", tmp_path / "w2", folder, env=env) as (_, log):
            wait_for(lambda: Job.objects.get(pk=job.pk).is_finished, 180, log, "the re-queued import")
            job.refresh_from_db()
            assert job.status == Status.SUCCEEDED and job.attempts >= 2, (job.status, job.error)  # re-run after the kill
            assert job.result["articles"] == articles(project) == ARTICLES  # all of it, exactly once
            assert swept(imports) == []


def _try(function, *args):
    try:
        return function(*args)
    except Exception as exc:  # noqa: BLE001 - the dead server's answer (none) is what the test expects
        return exc
