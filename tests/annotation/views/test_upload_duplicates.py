"""Nothing silently dropped (issue 19 item 4): an archive with two members of one name (also once
``./`` and doubled slashes are cleaned away), a member that is both a file and a folder, or the same
name from an archive and another upload is refused with 400 naming it, importing nothing — now and
as a background job — and no refusal shows a server path."""
from __future__ import annotations

import io
import json
import tarfile
import warnings
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Article, AuditEvent, Job, Status
from annotation.services.corpus.importing.uploads import run_import_job

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("import_dir")]


def jsonl(first: int, n: int = 3) -> bytes:
    return "".join(json.dumps({"id": f"a{i}", "complex": {"paragraphs": [[f"Complex {i} with words."]]},
                               "simple": {"paragraphs": [[f"Simple {i}."]]}}) + "\n"
                   for i in range(first, first + n)).encode()


def zipped(*members: tuple[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w") as zf:
        warnings.simplefilter("ignore")  # "Duplicate name" is the point
        for name, data in members:
            zf.writestr(name, data)
    return buffer.getvalue()


def tarred(*members: tuple[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tf:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def post(api, users, project, *files):
    uploads = [SimpleUploadedFile(name, data, content_type="application/octet-stream") for name, data in files]
    return api(users["rita"]).post(f"/api/projects/{project.pk}/import/", {"files": uploads}, format="multipart")


CASES = [
    pytest.param([("in.zip", zipped(("a.jsonl", jsonl(0)), ("a.jsonl", jsonl(10))))], "'a.jsonl'", id="zip-same-name"),
    pytest.param([("in.zip", zipped(("a.jsonl", jsonl(0)), ("./a.jsonl", jsonl(10))))], "'a.jsonl'", id="zip-dot-slash"),
    pytest.param([("in.zip", zipped(("x/a.jsonl", jsonl(0)), ("x//a.jsonl", jsonl(10))))], "'x/a.jsonl'",
                 id="zip-double-slash"),
    pytest.param([("in.tar.gz", tarred(("a.jsonl", jsonl(0)), ("./a.jsonl", jsonl(10))))], "'a.jsonl'",
                 id="tar-dot-slash"),
    pytest.param([("in.tar.gz", tarred(("a.jsonl", jsonl(0)), ("a.jsonl", jsonl(10))))], "'a.jsonl'", id="tar-same-name"),
    pytest.param([("in.zip", zipped(("a", jsonl(0)), ("a/b.jsonl", jsonl(10))))], "'a'", id="file-and-folder"),
    pytest.param([("in.tar.gz", tarred(("a", jsonl(0)), ("a/b.jsonl", jsonl(10))))], "'a'", id="tar-file-and-folder"),
    pytest.param([("a.jsonl", jsonl(0)), ("in.zip", zipped(("a.jsonl", jsonl(10))))], "a.jsonl",
                 id="upload-and-member"),
    pytest.param([("one.zip", zipped(("a.jsonl", jsonl(0)))), ("two.zip", zipped(("a.jsonl", jsonl(10))))], "a.jsonl",
                 id="two-archives"),
]


def no_server_path(text: str, import_dir) -> None:
    assert str(import_dir) not in text and "work-" not in text and "upload-" not in text and "/tmp" not in text


@pytest.mark.parametrize(("files", "named"), CASES)
def test_a_duplicate_name_is_refused_now_naming_it_and_nothing_is_imported(api, users, project, import_dir, files,
                                                                           named):
    response = post(api, users, project, *files)
    assert response.status_code == 400, response.content
    problems = " ".join(response.json()["problems"])
    assert named in problems and "nothing was imported" in problems
    no_server_path(response.content.decode(), import_dir)
    assert not Article.objects.filter(project=project).exists() and not AuditEvent.objects.filter(action="import")
    assert list(import_dir.iterdir()) == []


@pytest.mark.parametrize(("files", "named"), CASES)
def test_a_duplicate_name_fails_the_background_import_naming_it(api, users, project, import_dir, settings, files,
                                                                named):
    settings.IMPORT_BACKGROUND_BYTES = 10
    response = post(api, users, project, *files)
    assert response.status_code == 202, response.content
    job_id = response.json()["job"]["id"]
    run_import_job(job_id)
    job = Job.objects.get(pk=job_id)
    assert job.status == Status.FAILED and "nothing was imported" in job.message
    problems = " ".join(job.result["problems"])
    assert named in problems
    no_server_path(f"{job.error} {job.message} {json.dumps(job.result)}", import_dir)
    assert not Article.objects.filter(project=project).exists()
    assert list(import_dir.iterdir()) == []


def test_distinct_names_still_import(api, users, project):
    response = post(api, users, project, ("in.zip", zipped(("a.jsonl", jsonl(0)), ("b/a.jsonl", jsonl(10)))))
    assert response.status_code == 201, response.content
    assert Article.objects.filter(project=project).count() == 6


def test_an_unreadable_member_is_named_without_the_work_folder(api, users, project, import_dir):
    data = bytearray(zipped(("a.jsonl", jsonl(0, 50))))
    data[60:90] = b"\x00" * 30  # damage the member's compressed bytes (the directory stays readable)
    response = post(api, users, project, ("in.zip", bytes(data)))
    assert response.status_code == 400
    no_server_path(response.content.decode(), import_dir)
