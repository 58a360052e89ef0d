"""Uploads (``corpus/importing/uploads.py``): files staged in their own folder, imported now as a job that is
not resumable or — past ``IMPORT_BACKGROUND_BYTES``, as uploaded or once expanded — queued; the job's result or
its problems recorded on the row, the staged files removed either way."""
from __future__ import annotations

import io
import zipfile
from types import SimpleNamespace

import pytest

from annotation.models import Article, Job, Status
from annotation.services.corpus.importing import CorpusImportError, ImportRequest, uploads
from tests.annotation.services.conftest import corpus_counts
from tests.annotation.views.test_api_import import jsonl

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def import_dir(settings, tmp_path):
    folder = tmp_path / "imports"
    folder.mkdir()
    settings.IMPORT_DIR = folder
    return folder


class MemoryUpload:
    """What Django hands a view for an uploaded file it kept in memory."""

    def __init__(self, name: str, data: bytes) -> None:
        self.name, self.data = name, data

    def chunks(self):
        yield self.data[:5]
        yield self.data[5:]


def test_files_are_staged_under_their_relative_paths_and_found_again_by_key(import_dir):
    upload = uploads.stage_uploads([MemoryUpload("a.txt", b"Bees.\n"), MemoryUpload("b.txt", b"Owls!\n")],
                                   ["corpus/Bees-adv.txt", "corpus/Bees-ele.txt"])
    assert upload.key.startswith("upload-") and upload.folder.parent == import_dir
    assert upload.names == ("corpus/Bees-adv.txt", "corpus/Bees-ele.txt") and upload.size == 12
    assert (upload.folder / "corpus" / "Bees-adv.txt").read_bytes() == b"Bees.\n"
    assert uploads.staged(upload.key) == upload
    upload.remove()
    with pytest.raises(CorpusImportError, match="the uploaded files of this import are gone"):
        uploads.staged(upload.key)


@pytest.mark.parametrize("key", ["work-1", "upload-a/../b", "../upload-a", "upload-a\\b"])
def test_a_key_that_is_no_plain_upload_folder_is_refused(key):
    with pytest.raises(CorpusImportError, match="no staged upload"):
        uploads.staged(key)


def test_two_uploads_of_one_name_are_refused_and_nothing_stays(import_dir):
    with pytest.raises(CorpusImportError):
        uploads.stage_uploads([MemoryUpload("a.jsonl", b"x"), MemoryUpload("a.jsonl", b"y")])
    assert list(import_dir.iterdir()) == []


def test_a_small_upload_is_imported_now_as_a_job_and_its_files_removed(project, users, import_dir):
    received = uploads.receive(project, [MemoryUpload("in.jsonl", jsonl(2))], ImportRequest(), user=users["rita"])
    assert received.job is None and received.result.articles == 2
    job = Job.objects.get(kind="import")
    assert job.status == Status.SUCCEEDED and job.params["resumable"] is False and job.created_by == users["rita"]
    assert job.result["summary"] == received.result.describe() and "article_ids" not in job.result
    assert list(import_dir.iterdir()) == []


def test_a_refused_upload_records_its_problems_writes_nothing_and_removes_its_files(project, import_dir):
    with pytest.raises(CorpusImportError):
        uploads.receive(project, [MemoryUpload("in.jsonl", b"not json\n")], ImportRequest())
    job = Job.objects.get(kind="import")
    assert job.status == Status.FAILED and job.result["problems"][0].startswith("in.jsonl:1:")
    assert job.message == "nothing was imported: 1 problem(s)"
    assert corpus_counts()["articles"] == 0 and list(import_dir.iterdir()) == []


def test_a_refused_job_is_failed_and_its_problems_written_in_one_update(project, settings):
    """A client polling the job must never read it ``failed`` without its problems (CI once did: the
    problems were a second UPDATE after the one that failed the row)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    settings.IMPORT_BACKGROUND_BYTES = 1
    received = uploads.receive(project, [MemoryUpload("in.jsonl", b"not json\n")], ImportRequest())
    with CaptureQueriesContext(connection) as seen:
        uploads.run_import_job(received.job.pk)
    failing = [q["sql"] for q in seen.captured_queries if q["sql"].startswith("UPDATE") and "'failed'" in q["sql"]]
    assert len(failing) == 1 and "in.jsonl:1:" in failing[0], failing
    assert Job.objects.get(pk=received.job.pk).result["problems"][0].startswith("in.jsonl:1:")


def test_an_upload_past_the_background_size_is_queued_and_the_job_imports_it(project, settings, import_dir):
    settings.IMPORT_BACKGROUND_BYTES = 100
    received = uploads.receive(project, [MemoryUpload("in.jsonl", jsonl(3))], ImportRequest(language="en"))
    assert received.result is None and received.job.status == Status.QUEUED
    assert received.job.params["upload"] in {p.name for p in import_dir.iterdir()}
    assert not Article.objects.exists()
    uploads.run_import_job(received.job.pk)
    job = Job.objects.get(pk=received.job.pk)
    assert job.status == Status.SUCCEEDED and job.result["articles"] == 3 and list(import_dir.iterdir()) == []
    uploads.run_import_job(job.pk)  # delivered again: nothing more
    assert Article.objects.count() == 3


def test_a_small_zip_that_expands_past_the_limit_runs_in_the_background(settings):
    settings.IMPORT_BACKGROUND_BYTES = 1000
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("in.jsonl", b" " * 5000)
    upload = uploads.stage_uploads([MemoryUpload("in.zip", buffer.getvalue())])
    assert upload.size < 1000 and uploads.expanded_size(upload) == 5000 and uploads.runs_in_background(upload)
    plain = uploads.stage_uploads([MemoryUpload("in.jsonl", b"x" * 10)])
    assert uploads.expanded_size(plain) == 10 and not uploads.runs_in_background(plain)


def test_a_job_cancelled_while_queued_is_not_run_and_its_files_go(project, settings, import_dir):
    settings.IMPORT_BACKGROUND_BYTES = 100
    job = uploads.receive(project, [MemoryUpload("in.jsonl", jsonl(3))], ImportRequest()).job
    Job.objects.filter(pk=job.pk).update(status=Status.CANCELLED)
    uploads.run_import_job(job.pk)
    assert not Article.objects.exists() and list(import_dir.iterdir()) == []


# each upload's name in the staged folder (upload_names): relative paths kept for a folder, file names otherwise,
# and every name that could leave the folder or collide refused


def files(*names):
    return [SimpleNamespace(name=n) for n in names]


def test_a_folder_keeps_its_relative_paths_cleaned_and_files_their_names():
    assert uploads.upload_names(files("0000.parquet", "x"), ["./manual//dev/0000.parquet", "manual\\x"]) == [
        "manual/dev/0000.parquet", "manual/x"]
    assert uploads.upload_names(files("/tmp/a.jsonl", "b.tsv")) == ["a.jsonl", "b.tsv"]


@pytest.mark.parametrize("path", ["/etc/passwd", "../up.jsonl", "a/../../b", "c:/x", "\\server\\x", "a\x00b"])
def test_a_path_leaving_the_folder_is_refused(path):
    with pytest.raises(CorpusImportError, match="is not a relative path inside the uploaded folder"):
        uploads.upload_names(files("f"), [path])


def test_paths_must_be_one_per_file_and_names_unique():
    with pytest.raises(CorpusImportError, match="gives 1 relative paths for 2 files"):
        uploads.upload_names(files("a", "b"), ["a"])
    with pytest.raises(CorpusImportError, match="two uploaded files have this path"):
        uploads.upload_names(files("a", "b"), ["d/a", "d/a"])
    with pytest.raises(CorpusImportError, match="files of different folders"):
        uploads.upload_names(files("x/a.jsonl", "y/a.jsonl"))
    with pytest.raises(CorpusImportError, match="is a file and a folder of the upload"):
        uploads.upload_names(files("a", "b"), ["d", "d/b"])
    with pytest.raises(CorpusImportError, match="no usable name"):
        uploads.upload_names(files(""))
