"""Issue 19 items 1 and 5: an import is all or nothing once things restart, and memory per line is bounded.

Every upload's import is a recorded ``import`` job (an import done now too); the liveness sweep fails a
lost one done now and removes what it wrote and its staged upload (the undo and the sweep of stale staged
files themselves: ``services/corpus/importing/test_recovery.py``). A line, a document text and a sentence
each have a size limit (413 naming the setting). The real-process fault tests are in
``tests/workers/test_import_faults.py``.
"""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Article, AuditEvent, Job, Status
from annotation.services.background import liveness
from annotation.services.corpus.importing import ImportRequest, uploads
from tests import factories
from tests.annotation.services.conftest import corpus_counts
from tests.annotation.views.test_api_import import jsonl, post, upload

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("import_dir")]


class MemoryUpload:
    def __init__(self, name: str, data: bytes) -> None:
        self.name, self.data = name, data

    def chunks(self):
        yield self.data


def text_record(text: str, i: int = 0) -> bytes:
    return (json.dumps({"id": f"t{i}", "complex": {"text": text}, "simple": {"paragraphs": [["Short."]]}}) + "\n").encode()


# --- item 5: bounded memory per line ---------------------------------------------------------------

@pytest.mark.parametrize(("overrides", "data", "message"), [
    ({"IMPORT_MAX_LINE_BYTES": 1000}, jsonl(1) + text_record("Word. " * 400, 1),
     "in.jsonl:2: line 2 is longer than 1000 bytes; the limit is IMPORT_MAX_LINE_BYTES=1000"),
    ({"IMPORT_MAX_DOCUMENT_CHARS": 500}, text_record("Word. " * 100),
     "in.jsonl:1: complex.text: a document text has 600 characters; the limit is IMPORT_MAX_DOCUMENT_CHARS=500"),
    ({"IMPORT_MAX_SENTENCE_CHARS": 50}, text_record("A" * 60 + ". Fine."),
     "in.jsonl:1: a sentence of document 'complex' of article 't0' has 61 characters; the limit is IMPORT_MAX_SENTENCE_CHARS=50"),
    ({"IMPORT_MAX_SENTENCE_CHARS": 10}, jsonl(1),
     "in.jsonl:1: a sentence of document 'complex' of article 'a0' has 21 characters; the limit is IMPORT_MAX_SENTENCE_CHARS=10"),
    ({"IMPORT_MAX_DOCUMENT_CHARS": 30}, jsonl(1),
     "in.jsonl:1: document 'complex' of article 'a0' has 42 characters; the limit is IMPORT_MAX_DOCUMENT_CHARS=30"),
])
def test_a_line_document_or_sentence_over_its_limit_is_refused_with_413_naming_the_setting(
        api, users, project, settings, import_dir, overrides, data, message):
    for key, value in overrides.items():
        setattr(settings, key, value)
    before = corpus_counts()
    response = post(api, users, project, upload("in.jsonl", data))
    assert response.status_code == 413, response.json()
    assert message in response.json()["problems"], response.json()["problems"]
    assert corpus_counts() == before
    assert list(import_dir.iterdir()) == []


def test_a_level_file_over_the_document_limit_is_refused_before_it_is_split(api, users, project, settings):
    settings.IMPORT_MAX_DOCUMENT_CHARS = 100
    response = post(api, users, project, upload("A-adv.txt", b"One sentence here. " * 10), upload("A-ele.txt", b"Short."))
    assert response.status_code == 413
    assert ("A-adv.txt: a document text has 190 characters; the limit is IMPORT_MAX_DOCUMENT_CHARS=100"
            in response.json()["problems"])


def test_a_huge_line_is_refused_without_being_read_whole(project, settings, import_dir, monkeypatch):
    """The JSONL line never reaches json.loads, and the checker reads at most the limit of it."""
    from annotation.services.corpus.importing import CorpusImportError, import_path
    from annotation.services.corpus.importing.formats import jsonl as jsonl_format

    settings.IMPORT_MAX_LINE_BYTES = 64 * 1024
    path = import_dir / "huge.jsonl"
    with path.open("wb") as out:
        out.write(b'{"id": "huge", "complex": {"text": "')
        for _ in range(64):
            out.write(b"Word word word. " * 4096)  # 4 MB on one line
        out.write(b'"}, "simple": {"paragraphs": [["S."]]}}\n')
    monkeypatch.setattr(jsonl_format.json, "loads", lambda *a, **k: pytest.fail("the line was parsed"))
    with pytest.raises(CorpusImportError) as caught:
        import_path(project, path)
    assert caught.value.too_large
    assert [str(p) for p in caught.value.problems] == [
        "huge.jsonl:1: line 1 is longer than 64.0 KB; the limit is IMPORT_MAX_LINE_BYTES=65536"]


# --- item 1: every import is a recorded job; the sweep undoes a dead one ---------------------------

def test_an_import_done_now_is_a_recorded_job_that_succeeded(api, users, project, import_dir):
    response = post(api, users, project, upload("in.jsonl", jsonl(3)))
    assert response.status_code == 201
    job = Job.objects.get(kind="import")
    assert (job.status, job.params["resumable"], job.result["articles"], job.created_by) == (
        Status.SUCCEEDED, False, 3, users["rita"])
    assert list(import_dir.iterdir()) == []


def test_a_refused_import_done_now_is_a_failed_job_and_writes_nothing(api, users, project, import_dir):
    response = post(api, users, project, upload("in.jsonl", b'{"id": 1}\n'))
    assert response.status_code == 400
    job = Job.objects.get(kind="import")
    assert job.status == Status.FAILED and job.result["problems"]
    assert list(import_dir.iterdir()) == []


def _dead_import(project, user, *, resumable: bool, attempts: int = 1) -> tuple[Job, uploads.StagedUpload]:
    """An import job whose process died after committing a batch: RUNNING, heartbeat long stale,
    articles stamped with its token, its upload still staged."""
    staged = uploads.stage_uploads([MemoryUpload("in.jsonl", jsonl(3))])
    job = uploads.start_import_job(project, staged, ImportRequest(), user=user, enqueue=False, resumable=resumable)
    old = timezone.now() - timedelta(hours=1)
    Job.objects.filter(pk=job.pk).update(status=Status.RUNNING, started_at=old, heartbeat_at=old, attempts=attempts,
                                         worker="web@gone")
    for title in ("a0", "a1"):
        article = factories.make_article(project, title, {"adv": [["One."]], "ele": [["Uno."]]})
        article.meta = {**article.meta, "import": job.params["token"]}
        article.save()
    return job, staged


def test_the_sweep_fails_a_dead_import_done_now_and_removes_its_writes_and_upload(api, users, project, import_dir):
    job, staged = _dead_import(project, users["rita"], resumable=False)
    reaped = liveness.reap_stale()
    assert reaped.failed == [f"job #{job.pk}"] and reaped.requeued == []
    job.refresh_from_db()
    assert job.status == Status.FAILED and "what it had written was removed" in job.error
    assert not Article.objects.filter(project=project).exists()
    assert not staged.folder.exists()
    assert AuditEvent.objects.filter(action="worker.lost", details__outcome="failed").exists()
    response = post(api, users, project, upload("in.jsonl", jsonl(3)))  # the same upload, retried
    assert response.status_code == 201, response.json()
    assert Article.objects.filter(project=project).count() == 3


def test_a_background_import_lost_too_often_is_failed_and_undone(users, project, settings, import_dir):
    settings.MAX_ATTEMPTS = 2
    job, staged = _dead_import(project, users["rita"], resumable=True, attempts=1)
    Job.objects.filter(pk=job.pk).update(checkpoint={"lost_workers": 1})
    assert liveness.reap_stale().failed == [f"job #{job.pk}"]
    assert not Article.objects.filter(project=project).exists() and not staged.folder.exists()
