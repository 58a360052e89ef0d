from __future__ import annotations

import zipfile
from io import BytesIO

import pytest

from annotation.models import Article, Export, Job, Split, SplitChange, Status
from annotation.services.export import run_export_job
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(project, settings, tmp_path):
    from annotation.models import Adjudication, CandidatePair, indices_key

    settings.MEDIA_ROOT = str(tmp_path)
    for a in range(4):
        article = factories.make_article(project, f"a{a}", {"0": [["Complex one here.", "Complex two here."]],
                                                            "1": [["Simple one.", "Simple two."]]})
        docs = {d.level: d for d in article.documents.all()}
        for i, value in ((0, "aligned"), (1, "partial")):
            pair = CandidatePair.objects.create(article=article, complex_document=docs["0"], simple_document=docs["1"],
                                                complex_key=indices_key([i]), simple_key=indices_key([i]))
            Adjudication.objects.create(pair=pair, value=value, provenance="adjudicated")
    return project


def url(project, tail=""):
    return f"/api/projects/{project.pk}/{tail}"


def test_a_researcher_previews_counts_before_exporting(corpus, api, users):
    response = api(users["rita"]).post(url(corpus, "exports/preview/"),
                                       {"split_policy": {"mode": "counts", "train": 2, "dev": 1, "test": 1}}, format="json")
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["pairs"] == 8 and data["newly_assigned"] == 4
    assert data["split_articles"] == {"train": 2, "dev": 1, "test": 1}
    assert sum(s["pairs"] for s in data["splits"].values()) == 8
    assert not Split.objects.exists()  # a preview assigns nothing


def test_an_export_job_runs_and_its_zip_is_downloadable(corpus, api, users, django_capture_on_commit_callbacks):
    client = api(users["rita"])
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(url(corpus, "exports/"), {"formats": ["jsonl", "tsv"]}, format="json")
    assert response.status_code == 202, response.content
    started = response.json()
    assert started["status"] == "queued" and started["download_url"] is None and len(callbacks) == 1
    job = Job.objects.get(pk=started["job"])
    assert job.kind == "export" and job.params["export"] == started["id"]
    run_export_job(job.pk)  # what the worker does
    detail = client.get(started["status_url"]).json()
    assert detail["status"] == Status.SUCCEEDED and detail["pairs"] == 8 and detail["manifest"]["counts"]["pairs"] == 8
    download = client.get(detail["download_url"])
    assert download.status_code == 200 and download["Content-Type"] == "application/zip"
    names = zipfile.ZipFile(BytesIO(b"".join(download.streaming_content))).namelist()
    assert f"export-{started['id']}/jsonl/train.jsonl" in names
    assert Job.objects.get(pk=job.pk).result["export"] == started["id"]
    assert client.get(url(corpus, "exports/")).json()["results"][0]["id"] == started["id"]


def test_annotators_and_outsiders_cannot_export_or_download(corpus, api, users, settings):
    from annotation.services import export

    done = export.run_export(corpus, export.ExportOptions.parse({"formats": ["jsonl"]}))
    for user, code in ((users["anna"], 403), (users["olga"], 404), (None, 401)):
        assert api(user).post(url(corpus, "exports/"), {}, format="json").status_code == code
        assert api(user).get(url(corpus, f"exports/{done.pk}/download/")).status_code == code
    assert api(users["admin"]).get(url(corpus, f"exports/{done.pk}/download/")).status_code == 200


def test_bad_options_are_a_400_naming_the_problem(corpus, api, users):
    response = api(users["rita"]).post(url(corpus, "exports/"), {"formats": ["xml"]}, format="json")
    assert response.status_code == 400 and "unknown formats 'xml'" in response.json()["options"]
    response = api(users["rita"]).post(url(corpus, "exports/"), {"kind": "auto", "runs": [999]}, format="json")
    assert response.status_code == 400 and "run(s) 999 not found" in response.json()["options"]
    assert not Export.objects.exists()


def test_splits_are_assigned_edited_and_a_locked_one_needs_an_override(corpus, api, users):
    client = api(users["rita"])
    response = client.post(url(corpus, "splits/"), {"policy": {"mode": "counts", "train": 2, "dev": 1, "test": 1}},
                           format="json")
    assert response.status_code == 200 and response.json()["counts"] == {"train": 2, "dev": 1, "test": 1}
    article = Article.objects.filter(project=corpus, split__name="train").first()
    Split.objects.filter(article=article).update(locked=True)
    target = url(corpus, f"splits/{article.pk}/")
    assert client.put(target, {"split": "test"}, format="json").status_code == 409
    assert client.put(target, {"split": "test", "override": True}, format="json").status_code == 400
    response = client.put(target, {"split": "test", "override": True, "reason": "overlaps TURK"}, format="json")
    assert response.status_code == 200 and response.json()["split"] == "test"
    data = client.get(url(corpus, "splits/")).json()
    assert data["changes"][0]["override"] and data["changes"][0]["reason"] == "overlaps TURK"
    assert SplitChange.objects.get().user == users["rita"]
    assert api(users["anna"]).put(target, {"split": "dev"}, format="json").status_code == 403


def test_the_export_page_renders_for_researchers_only(corpus, client, users):
    client.force_login(users["rita"])
    page = client.get(f"/projects/{corpus.pk}/export/")
    assert page.status_code == 200 and b"export-config" in page.content and b"Preview counts" in page.content
    client.force_login(users["anna"])
    assert client.get(f"/projects/{corpus.pk}/export/").status_code == 403


def test_the_preview_answers_each_gold_policys_pairs_by_origin(corpus, api, users):
    """issue 18: the preview endpoint breaks each policy's pairs down by imports, adjudication, majority, single."""
    from annotation.models import CandidatePair, Label

    article = Article.objects.get(project=corpus, title="a0")
    docs = {d.level: d for d in article.documents.all()}
    lone = CandidatePair.objects.create(article=article, complex_document=docs["0"], simple_document=docs["1"],
                                        complex_key="0", simple_key="1")
    Label.objects.create(pair=lone, annotator=users["anna"], value="partial", seconds=5.0)
    response = api(users["rita"]).post(url(corpus, "exports/preview/"), {}, format="json")
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["label_policy"] == "majority-or-single" and data["pairs"] == 9
    assert data["policies"]["majority-or-single"] == {
        "pairs": 9, "from": {"imported": 0, "adjudicated": 8, "majority": 0, "single": 1, "tie": 0, "derived": 0}}
    assert data["policies"]["stored"]["pairs"] == data["policies"]["majority"]["pairs"] == 8
    stored = api(users["rita"]).post(url(corpus, "exports/preview/"), {"label_policy": "stored"}, format="json").json()
    assert stored["pairs"] == 8 and stored["policies"] == data["policies"]


def test_a_big_projects_first_gold_preview_is_a_202_while_one_job_computes_it(corpus, api, users, monkeypatch):
    """Issue 37: a big project's first gold preview (13 s at a million pairs) is computed by one ``export-preview``
    job, not while the request waits; once it ran, the preview equals a fresh computation, and a later state is
    computed at once from the stored per-article parts."""
    from annotation.models import CandidatePair, Label
    from annotation.services import export
    from annotation.services.export import ExportOptions, kept_preview
    from annotation.services.review import review_state

    monkeypatch.setattr(review_state, "LAZY_ARTICLES", 1)
    researcher = api(users["rita"])
    for _ in range(2):
        answer = researcher.post(url(corpus, "exports/preview/"), {}, format="json")
        assert answer.status_code == 202 and answer["Retry-After"] == "2" and answer.json()["status"] == "computing"
    job = Job.objects.get(kind=kept_preview.PREVIEW_JOB)  # one job, however often asked
    assert answer.json()["job"]["id"] == job.pk and ExportOptions.stored(job.params["options"]) == ExportOptions.parse({})
    export.preview_job(job.pk)  # as a worker runs it
    answer = researcher.post(url(corpus, "exports/preview/"), {}, format="json")
    assert answer.status_code == 200
    fresh = export.compute_preview(corpus, ExportOptions.parse({}))
    assert {**answer.json(), "seconds": None} == {**fresh, "seconds": None} and fresh["pairs"] == 8
    article = Article.objects.get(project=corpus, title="a0")
    docs = {d.level: d for d in article.documents.all()}
    pair = CandidatePair.objects.create(article=article, complex_document=docs["0"], simple_document=docs["1"],
                                        complex_key="0", simple_key="1")
    Label.objects.create(pair=pair, annotator=users["anna"], value="partial", seconds=5.0)
    answer = researcher.post(url(corpus, "exports/preview/"), {}, format="json")  # a new state: at once, from the parts
    assert answer.status_code == 200 and answer.json()["pairs"] == 9 and Job.objects.count() == 1
