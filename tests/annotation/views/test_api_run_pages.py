"""Runs researchers can read and manage: deleting a run, option schemas and checks before queueing,
and the pair filters of a run's page (labelled, shape, text, the run's own predictions)."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, CandidatePair, Label, ModelVersion, Prediction
from annotation.services.alignment import alignment_runs, run_options, run_saving
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(project):
    article = factories.make_article(project, "Bees", {
        "adv": [["Bees make honey.", "They live in hives.", "Queens lay eggs."]],
        "ele": [["Bees make honey.", "Hives are homes.", "The queen lays eggs."]]})
    c, s = article.documents.order_by("rank")
    return article, c, s


def pair(run, corpus, ck, sk, score=0.5, label="aligned"):
    article, c, s = corpus
    return factories.make_pair(run, article=article, complex_document=c, simple_document=s, complex_key=ck,
                               simple_key=sk, score=score, predicted_label=label)


# --- DELETE /api/runs/<id>/ -------------------------------------------------------------------

def test_deleting_a_run_removes_its_predictions_and_only_the_pairs_nobody_else_needs(api, users, project, corpus):
    old = AlignmentRun.objects.create(project=project, method="jaccard", status="succeeded")
    run = AlignmentRun.objects.create(project=project, method="tfidf", status="succeeded")
    only_mine = pair(run, corpus, "0", "0")
    labelled = pair(run, corpus, "1", "1")
    Label.objects.create(pair=labelled, annotator=users["anna"], value="aligned")
    shared = pair(old, corpus, "2", "2", score=0.3, label="partial")
    pair(run, corpus, "2", "2", score=0.9, label="aligned")
    response = api(users["rita"]).delete(f"/api/runs/{run.pk}/")
    assert response.status_code == 200, response.content
    assert response.json() == {"run": run.pk, "predictions": 3, "pairs": 1}
    assert not AlignmentRun.objects.filter(pk=run.pk).exists()
    assert not CandidatePair.objects.filter(pk=only_mine.pk).exists()
    assert CandidatePair.objects.filter(pk=labelled.pk).exists()
    shared.refresh_from_db()
    assert (shared.score, shared.predicted_label) == (0.3, "partial")  # back to the remaining run's prediction
    assert Prediction.objects.filter(run=old).count() == 1


def test_a_running_run_is_not_deleted(api, users, project):
    run = AlignmentRun.objects.create(project=project, method="jaccard", status="running")
    response = api(users["rita"]).delete(f"/api/runs/{run.pk}/")
    assert response.status_code == 400
    assert "cancel" in response.json()["detail"]


def test_annotators_cannot_delete_runs(api, users, project):
    run = AlignmentRun.objects.create(project=project, method="jaccard", status="succeeded")
    assert api(users["anna"]).delete(f"/api/runs/{run.pk}/").status_code == 403
    assert AlignmentRun.objects.filter(pk=run.pk).exists()


# --- parameters checked before queueing ---------------------------------------------------------

def test_methods_endpoint_lists_each_methods_options_with_ranges(api, users, project):
    data = api(users["rita"]).get(f"/api/methods/?project={project.pk}").json()
    jaccard = next(m for m in data["methods"] if m["name"] == "jaccard")
    threshold = next(o for o in jaccard["options"] if o["name"] == "partial_threshold")
    assert threshold == {"name": "partial_threshold", "type": "float", "default": 0.15, "min": 0.0, "max": 1.0,
                         "help": threshold["help"], "choices": None, "nullable": False}
    crf = next(m for m in data["methods"] if m["name"] == "crf")
    assert "crf" in crf["model_kinds"]
    assert data["model_versions"] == []


def test_a_bad_parameter_is_refused_with_the_valid_options(api, users, project, monkeypatch):
    queued = []
    monkeypatch.setattr("annotation.services.background.jobs.enqueue_run", queued.append)
    client = api(users["rita"])
    response = client.post("/api/runs/", {"project": project.pk, "method": "jaccard",
                                          "params": {"partial_threshold": 3, "treshold": 1}}, format="json")
    assert response.status_code == 400
    data = response.json()
    assert data["params"] == {"partial_threshold": "must be <= 1, got 3", "treshold": "unknown option"}
    assert "partial_threshold (float in [0, 1], default 0.15)" in data["valid_options"]
    assert "valid:" in data["detail"]
    assert not AlignmentRun.objects.exists() and not queued
    ok = client.post("/api/runs/", {"project": project.pk, "method": "jaccard",
                                    "params": {"partial_threshold": 0.2}}, format="json")
    assert ok.status_code == 201, ok.content


def test_an_unknown_level_in_level_pairs_is_refused_with_the_projects_levels(api, users, project, corpus,
                                                                             monkeypatch):
    monkeypatch.setattr("annotation.services.background.jobs.enqueue_run", lambda run: None)
    response = api(users["rita"]).post("/api/runs/", {"project": project.pk, "method": "jaccard",
                                                      "level_pairs": [["adv", "simple"]]}, format="json")
    assert response.status_code == 400
    assert "unknown level 'simple' in level_pairs; the project's levels are: adv, ele" in str(response.json())
    assert not AlignmentRun.objects.exists()


def test_a_model_path_is_refused(api, users, project):
    response = api(users["rita"]).post("/api/runs/", {"project": project.pk, "method": "sbert",
                                                      "params": {"model": "/etc/models/evil"}}, format="json")
    assert response.status_code == 400
    assert "model_version" in response.json()["params"]["model"]
    assert not AlignmentRun.objects.exists()


def test_a_model_version_of_the_wrong_kind_is_refused(project):
    version = ModelVersion.objects.create(project=project, name="gain", kind="gain-classifier", path="/x")
    with pytest.raises(run_options.ModelVersionRefused, match="crf runs use"):
        alignment_runs.start_run(project, "crf", model_version=version, enqueue=False)
    crf = ModelVersion.objects.create(project=project, name="v1", kind="crf", path="/y")
    assert alignment_runs.start_run(project, "crf", model_version=crf, enqueue=False).model_version == crf


def test_a_worker_file_option_is_refused_from_the_app(project):
    with pytest.raises(run_options.RunOptionsError, match="filter"):
        alignment_runs.start_run(project, "sum4simp", params={"filter": "/tmp/f.pkl"}, enqueue=False)


# --- every refusal of the runs and jobs APIs carries its code (issue 38: no plain ValueError) ----------------

def test_a_bad_mining_option_is_refused_under_its_name_with_a_code(api, users, project):
    response = api(users["rita"]).post("/api/runs/", {"project": project.pk, "method": "muss-corpus",
                                                      "params": {"k": 0, "keep_files": "yes", "nope": 1}}, format="json")
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "invalid"
    assert set(body["problems"]) == {"k", "keep_files", "nope"}  # the engine's and the app's options at once
    assert body["problems"]["nope"] == "unknown option" and body["params"] == body["problems"]
    assert any(v.startswith("keep_files") for v in body["valid_options"])
    assert not AlignmentRun.objects.exists()


def test_the_runs_apis_refusals_keep_their_status_and_carry_a_code(api, users, project, corpus):
    from annotation.models import TRAIN_JOB, Job

    client = api(users["rita"])
    running = AlignmentRun.objects.create(project=project, method="jaccard", status="running")
    done = AlignmentRun.objects.create(project=project, method="jaccard", status="succeeded")
    job = Job.objects.create(project=project, kind=TRAIN_JOB, status="succeeded")
    gain = ModelVersion.objects.create(project=project, name="gain", kind="gain-classifier", path="/x")
    answers = {
        "run_active": client.delete(f"/api/runs/{running.pk}/"),
        "succeeded": client.post(f"/api/runs/{done.pk}/retry/"),
        "bad_comparison": client.get(f"/api/runs/compare/?old={done.pk}&new={done.pk}"),
        "unknown_level": client.post("/api/runs/", {"project": project.pk, "method": "jaccard",
                                                    "level_pairs": [["adv", "simple"]]}, format="json"),
        "bad_level_pairs": client.post("/api/runs/", {"project": project.pk, "method": "jaccard",
                                                      "level_pairs": [["adv", "adv"]]}, format="json"),
        "bad_model_version": client.post("/api/runs/", {"project": project.pk, "method": "crf",
                                                        "model_version": gain.pk}, format="json"),
        "invalid": client.post("/api/runs/", {"project": project.pk, "method": "jaccard",
                                              "params": {"partial_threshold": 3}}, format="json"),
    }
    for code, response in answers.items():
        assert (response.status_code, response.json().get("code")) == (400, code), response.content
        assert response.json()["detail"]
    retried = client.post(f"/api/jobs/{job.pk}/retry/")
    assert (retried.status_code, retried.json()["code"]) == (400, "succeeded")
    assert "start a new one" in retried.json()["detail"]
    assert AlignmentRun.objects.count() == 2


# --- a run's pairs ------------------------------------------------------------------------------

def test_a_runs_pairs_filter_by_labelled_shape_and_text_and_show_that_runs_prediction(api, users, project, corpus):
    old = AlignmentRun.objects.create(project=project, method="jaccard", status="succeeded")
    run = AlignmentRun.objects.create(project=project, method="tfidf", status="succeeded")
    one = pair(run, corpus, "0", "0", score=0.9)
    split = pair(run, corpus, "1", "1,2", score=0.4, label="partial")
    pair(old, corpus, "0", "0", score=0.1, label="not-aligned")  # a later run changes the pair's cache
    run_saving.link_sentences(CandidatePair.objects.all())
    Label.objects.create(pair=split, annotator=users["anna"], value="partial")
    client = api(users["rita"])

    def ids(query):
        response = client.get(f"/api/pairs/?run={run.pk}&{query}")
        assert response.status_code == 200, response.content
        return [p["id"] for p in response.json()["results"]]

    assert ids("labelled=1") == [split.pk]
    assert ids("labelled=0") == [one.pk]
    assert ids("shape=1:1") == [one.pk]
    assert ids("shape=n:m") == [split.pk]
    assert ids("shape=1:n") == [split.pk]
    assert ids("q=queen") == [split.pk]
    assert ids("label=aligned") == [one.pk]  # this run's label, not the other run's
    assert ids("ordering=-score") == [one.pk, split.pk]
    assert ids("score__gte=0.5") == [one.pk]
    first = client.get(f"/api/pairs/?run={run.pk}&ordering=-score").json()["results"][0]
    assert (first["score"], first["predicted_label"]) == (0.9, "aligned")
    assert client.get(f"/api/pairs/?run={run.pk}&shape=x").status_code == 400


def test_the_run_page_shows_the_error_only_to_researchers(client, users, project):
    run = AlignmentRun.objects.create(project=project, method="jaccard", status="failed", error="Traceback: boom",
                                      created_by=users["rita"])
    client.force_login(users["rita"])
    page = client.get(f"/projects/{project.pk}/runs/{run.pk}/").content.decode()
    assert "Traceback: boom" in page and "rita" in page and "Compare with" in page
    client.force_login(users["anna"])
    assert client.get(f"/runs/{run.pk}/").status_code == 403  # she annotates blind: a run's pairs are predictions
    project.config = {"show_predictions": True}
    project.save()
    response = client.get(f"/runs/{run.pk}/")
    assert response.status_code == 200
    assert "Traceback: boom" not in response.content.decode()
    client.force_login(users["olga"])
    assert client.get(f"/runs/{run.pk}/").status_code == 404


# --- POST /api/runs/ with a queue that is no queue (issue 36 item 1) ---------------------------------------

@pytest.mark.backend  # an HTML 500 on both databases: CI runs this on the embedded SQLite too
@pytest.mark.parametrize("queue", [[], {}, ["cpu"], {"name": "cpu"}, 3, "tpu", ""])
def test_a_queue_that_is_no_queue_is_a_400_naming_it_and_starts_no_run(api, users, project, queue):
    response = api(users["rita"]).post("/api/runs/", {"project": project.pk, "method": "jaccard", "queue": queue},
                                       format="json")
    assert response.status_code == 400, response.content[:300]
    assert "queue" in response.json() and not AlignmentRun.objects.exists()


@pytest.mark.backend
def test_a_run_goes_to_the_queue_asked_for_or_gpu(api, users, project):
    client = api(users["rita"])
    queued = [client.post("/api/runs/", {"project": project.pk, "method": "jaccard", **extra}, format="json")
              for extra in ({"queue": "cpu"}, {})]
    assert [r.status_code for r in queued] == [201, 201], [r.content[:200] for r in queued]
    assert [r.json()["queue"] for r in queued] == ["cpu", "gpu"]
