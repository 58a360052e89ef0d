"""Corpus uploads (API and page): bounded while they stream in, imported now when small, by an
``import`` job (202, progress) when large; every limit refusal is a 413 that names its setting."""
from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Article, AuditEvent, Job, Status
from annotation.services.corpus.importing.uploads import run_import_job
from tests.annotation.services.conftest import corpus_counts

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("import_dir")]


def record(i: int, sentences: int = 2) -> dict:
    return {"id": f"a{i}", "complex": {"paragraphs": [[f"Complex sentence {i}.{k}." for k in range(sentences)]]},
            "simple": {"paragraphs": [[f"Simple {i}."]]}, "gold": [[0, 0]]}


def jsonl(n: int, sentences: int = 2) -> bytes:
    return "".join(json.dumps(record(i, sentences)) + "\n" for i in range(n)).encode()


def upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def post(api, users, project, *files, **fields):
    return api(users["rita"]).post(f"/api/projects/{project.pk}/import/", {"files": list(files), **fields},
                                   format="multipart")


def test_a_small_upload_is_imported_now_and_its_files_are_not_kept(api, users, project, import_dir):
    response = post(api, users, project, upload("in.jsonl", jsonl(3)))
    assert response.status_code == 201, response.json()
    assert (response.json()["articles"], response.json()["pairs"]) == (3, 3)
    assert list(import_dir.iterdir()) == []
    event = AuditEvent.objects.get(action="import")
    assert (event.actor, event.project, event.details["articles"], event.details["files"]) == (
        users["rita"], project, 3, ["in.jsonl"])


def test_a_large_upload_becomes_an_import_job_that_reports_progress_and_its_result(api, users, project, settings,
                                                                                    import_dir):
    settings.IMPORT_BACKGROUND_BYTES = 1000
    data = jsonl(40)
    response = post(api, users, project, upload("big.jsonl", data))
    assert response.status_code == 202, response.json()
    body = response.json()
    job = Job.objects.get(pk=body["job"]["id"])
    assert (job.kind, job.status, body["status_url"]) == ("import", Status.QUEUED, f"/api/jobs/{job.pk}/")
    assert job.params["files"] == ["big.jsonl"] and job.params["bytes"] == len(data)
    assert not Article.objects.exists()  # nothing until the job runs

    run_import_job(job.pk)  # the task's body, as the worker runs it

    polled = api(users["rita"]).get(body["status_url"]).json()
    assert (polled["status"], polled["progress"]) == ("succeeded", 100.0)
    assert polled["result"]["articles"] == 40 and polled["result"]["summary"].startswith("40 articles")
    assert project.articles.count() == 40
    assert list(import_dir.iterdir()) == []  # the staged upload is removed
    assert AuditEvent.objects.get(action="import").actor == users["rita"]


def test_a_bad_large_upload_fails_its_job_with_every_problem_and_imports_nothing(api, users, project, settings,
                                                                                 import_dir):
    settings.IMPORT_BACKGROUND_BYTES = 1000
    data = jsonl(40) + b'{"id": "broken", "complex": \n'
    job_id = post(api, users, project, upload("big.jsonl", data)).json()["job"]["id"]
    before = corpus_counts()
    run_import_job(job_id)
    job = Job.objects.get(pk=job_id)
    assert job.status == Status.FAILED
    assert job.result["problems"] == ["big.jsonl:41: malformed JSON: Expecting value (column 29)"]
    assert "nothing was imported" in job.message
    assert corpus_counts() == before and not AuditEvent.objects.filter(action="import").exists()
    assert list(import_dir.iterdir()) == []


def test_bad_options_are_refused_before_a_job_is_queued(api, users, project, settings, import_dir):
    settings.IMPORT_BACKGROUND_BYTES = 10
    response = post(api, users, project, upload("in.jsonl", jsonl(2)), format="csv")
    assert response.status_code == 400
    assert response.json()["problems"] == ["format: unknown format 'csv'; "
                                           "choose one of: auto, jsonl, levels, stories, parallel, wiki-manual, newsela, hf"]
    assert not Job.objects.exists() and list(import_dir.iterdir()) == []


@pytest.mark.parametrize(("overrides", "files", "setting", "message"), [
    ({"IMPORT_MAX_BYTES": 2000}, [("a.jsonl", 1200), ("b.jsonl", 1200)], "IMPORT_MAX_BYTES",
     "the upload is larger than 2.0 KB; the limit is IMPORT_MAX_BYTES=2000"),
    ({"MAX_UPLOAD_BYTES": 1000}, [("a.jsonl", 1200)], "MAX_UPLOAD_BYTES",
     "a.jsonl: file is larger than 1000 bytes; the limit is MAX_UPLOAD_BYTES=1000"),
    ({"IMPORT_MAX_FILES": 2}, [("a.jsonl", 10), ("b.jsonl", 10), ("c.jsonl", 10)], "IMPORT_MAX_FILES",
     "the upload holds more than 2 files; the limit is IMPORT_MAX_FILES=2"),
])
def test_an_upload_over_a_limit_is_cut_off_while_it_streams_and_answered_413(api, users, project, settings, import_dir,
                                                                             overrides, files, setting, message):
    for key, value in overrides.items():
        setattr(settings, key, value)
    before = corpus_counts()
    response = post(api, users, project, *[upload(name, b"x" * size) for name, size in files])
    assert response.status_code == 413
    assert response.json() == {"detail": "nothing was imported", "problems": [message], "limits": [setting]}
    assert corpus_counts() == before and not Job.objects.exists()
    assert list(import_dir.iterdir()) == []  # nothing staged, no temporary file left


@pytest.mark.parametrize(("overrides", "data", "message"), [
    ({"IMPORT_MAX_LINES": 5}, jsonl(6), "in.jsonl: file in.jsonl has 6 lines; the limit is IMPORT_MAX_LINES=5"),
    ({"IMPORT_MAX_ARTICLES": 4}, jsonl(6), "the import holds more than 4 articles; the limit is IMPORT_MAX_ARTICLES=4"),
    ({"IMPORT_MAX_SENTENCES_PER_DOCUMENT": 3}, jsonl(2, sentences=4),
     "in.jsonl:1: document 'complex' of article 'a0' has 4 sentences; the limit is IMPORT_MAX_SENTENCES_PER_DOCUMENT=3"),
])
def test_content_over_a_limit_is_refused_with_the_setting_named(api, users, project, settings, overrides, data, message):
    for key, value in overrides.items():
        setattr(settings, key, value)
    before = corpus_counts()
    response = post(api, users, project, upload("in.jsonl", data))
    assert response.status_code == 413
    assert message in response.json()["problems"]
    assert corpus_counts() == before


def test_a_zip_whose_headers_understate_a_member_is_refused_and_nothing_is_written(api, users, project):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("in.jsonl", jsonl(3))
    data = bytearray(buf.getvalue())
    real = len(jsonl(3)).to_bytes(4, "little")
    fake = (10).to_bytes(4, "little")
    # the uncompressed size in the local header (offset 22) and the central directory (offset 24 of its entry)
    assert data[22:26] == real
    central = data.rindex(b"PK\x01\x02")
    assert data[central + 24:central + 28] == real
    data[22:26] = data[central + 24:central + 28] = fake
    before = corpus_counts()
    response = post(api, users, project, upload("corpus.zip", bytes(data)))
    assert response.status_code == 400, response.json()
    assert response.json()["problems"][0].startswith("corpus.zip: not a readable zip archive: member 'in.jsonl'")
    assert corpus_counts() == before


def test_a_zip_declaring_more_than_the_import_limit_is_refused_before_unpacking(api, users, project, settings):
    settings.IMPORT_MAX_BYTES = 5000
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("in.jsonl", b"\n" * 6000)  # compresses to a few bytes
    response = post(api, users, project, upload("corpus.zip", buf.getvalue()))
    assert response.status_code == 413
    assert response.json()["limits"] == ["IMPORT_MAX_BYTES"]
    assert "corpus.zip: archive contents exceed the limit per import: 5.9 KB unpacked (IMPORT_MAX_BYTES=5000)" in \
        response.json()["problems"]


def test_the_import_page_shows_a_background_import_with_its_progress(client, users, project, settings):
    settings.IMPORT_BACKGROUND_BYTES = 1000
    client.force_login(users["rita"])
    response = client.post(f"/projects/{project.pk}/import/", {"files": [upload("big.jsonl", jsonl(40))], "format": "auto"})
    assert response.status_code == 202
    job = Job.objects.get(kind="import")
    html = response.content.decode()
    assert f"job #{job.pk}" in html and 'id="import-progress"' in html and "js/import.js" in html
    config = json.loads(html.split('id="import-config" type="application/json">')[1].split("</script>")[0])
    assert config["job_api"] == f"/api/jobs/{job.pk}/" and config["cancel_api"] == f"/api/jobs/{job.pk}/cancel/"


def test_the_import_page_refuses_an_upload_over_a_limit_with_413(client, users, project, settings):
    settings.MAX_UPLOAD_BYTES = 100
    client.force_login(users["rita"])
    response = client.post(f"/projects/{project.pk}/import/", {"files": [upload("in.jsonl", jsonl(3))]})
    assert response.status_code == 413
    assert "the limit is MAX_UPLOAD_BYTES=100" in response.content.decode()
    assert not Article.objects.exists()


def test_the_gold_meaning_is_asked_and_the_answer_says_what_was_stored(api, users, project):
    record = {"id": "G", "complex": {"paragraphs": [["C0.", "C1."]]}, "simple": {"paragraphs": [["S0."]]},
              "gold": [[0, 0]]}
    body = (json.dumps(record) + "\n").encode()
    response = post(api, users, project, upload("g.jsonl", body), gold_meaning="exhaustive", test_questions="true")
    assert response.status_code == 201, response.content
    data = response.json()
    assert (data["gold_meaning"], data["test_questions"], data["gold"]) == \
        ("exhaustive", True, {"aligned-or-partial": 1, "complete": 1, "tests": 1})
    assert data["gold_summary"] == ("1 links as exhaustive gold (Task 1 only: 1 without a kind), 1 articles complete, "
                                    "1 test questions")
    refused = post(api, users, project, upload("h.jsonl", body.replace(b'"G"', b'"H"')), gold_meaning="complete")
    assert refused.status_code == 400 and "gold_meaning" in refused.content.decode()


def test_a_background_import_keeps_the_gold_meaning(api, users, project, settings):
    settings.IMPORT_BACKGROUND_BYTES = 10
    record = {"id": "P", "complex": {"paragraphs": [["C0."]]}, "simple": {"paragraphs": [["S0."]]}, "gold": [[0, 0]]}
    response = post(api, users, project, upload("p.jsonl", (json.dumps(record) + "\n").encode()),
                    gold_meaning="predictions")
    job = Job.objects.get(pk=response.json()["job"]["id"])
    run_import_job(job.pk)
    job.refresh_from_db()
    assert job.status == Status.SUCCEEDED and job.result["gold_summary"].startswith("1 links as predictions")


@pytest.mark.parametrize("large", [False, True])
def test_an_uploads_options_are_parsed_once_and_reach_the_writer_as_given(api, users, project, settings, monkeypatch,
                                                                           large):
    """Issue 38: ``check_options`` ran three times per upload; now the view parses an ``ImportRequest`` once and
    the services carry it (a background job parses its stored params once more, in the worker)."""
    from annotation.models import Article
    from annotation.services.corpus.importing import request as request_module

    parsed = []
    real = request_module.parse_request
    monkeypatch.setattr(request_module, "parse_request", lambda *a, **k: parsed.append(a[3]) or real(*a, **k))
    if large:
        settings.IMPORT_BACKGROUND_BYTES = 10
    response = post(api, users, project, upload("in.jsonl", jsonl(2)), gold_meaning="exhaustive", on_conflict="skip",
                    test_questions="on")
    assert response.status_code == (202 if large else 201)
    if large:
        from annotation.services.corpus.importing import uploads

        uploads.run_import_job(response.json()["job"]["id"])  # the worker's body, here
    assert len(parsed) == (2 if large else 1) and parsed[0] == {"gold_meaning": "exhaustive", "on_conflict": "skip",
                                                                  "test_questions": "on"}
    stored = Article.objects.get(project=project, title="a0").meta["gold_import"]
    assert stored["meaning"] == "exhaustive" and stored["test_questions"] is True
