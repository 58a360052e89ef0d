"""Training jobs and model versions (``training/versions.py``): refused before anything is queued, cancelled
before a worker trains, promoted (once) and re-aligned with, zipped for download."""
from __future__ import annotations

import pytest

from annotation.models import ArticleCompletion, AuditEvent, Label, ModelVersion, Status
from annotation.services.alignment import alignment_runs, run_options
from annotation.services.training import versions as training
from annotation.services.training.request import TrainRequest
from tests import factories


def test_training_refuses_to_start_without_data_or_with_a_bad_option(project, users, completed):
    with pytest.raises(training.TrainingError, match="config: epochs: must be >= 1, got 0"):
        TrainRequest.parse({"config": {"epochs": 0}})
    with pytest.raises(training.TrainingError, match="unknown"):
        TrainRequest.parse({"config": {"learning_rate": 1}})
    with pytest.raises(training.TrainingError, match="seed: must be >= 0"):
        TrainRequest.parse({"seed": -1})
    with pytest.raises(training.TrainingError, match="base_version: not a model version of this project"):
        training.start_training(project, TrainRequest(base_version=99999))
    ArticleCompletion.objects.all().delete()
    with pytest.raises(training.TrainingError, match="exhaustively annotated"):
        training.start_training(project)
    Label.objects.all().delete()
    with pytest.raises(training.TrainingError, match="nothing to train on"):
        training.start_training(project)


def test_a_cancelled_job_is_not_trained(project, completed):
    job = training.start_training(project, enqueue=False)
    assert training.cancel(job)
    training.run_training_job(job.pk)  # a worker picking it up afterwards does nothing
    job.refresh_from_db()
    assert job.status == Status.CANCELLED and not ModelVersion.objects.exists()
    assert not training.cancel(job)  # finished: nothing to cancel


def test_versions_are_promoted_and_realign_only_unlabelled_articles(api, users, project, completed, tmp_path):
    version = ModelVersion.objects.create(project=project, name="crf-v1", kind="crf", path=str(tmp_path))
    other = factories.make_article(project, "Owls", {"adv": [["Owls hunt at night."]], "int": [["Owls hunt."]]})
    rita = api(users["rita"])
    assert rita.post(f"/api/model-versions/{version.pk}/promote/").json()["default"] is True
    project.refresh_from_db()
    assert run_options.default_version(project) == version
    run = rita.post(f"/api/model-versions/{version.pk}/realign/", {"scope": "unlabelled"}, format="json").json()
    assert run["model_version"] == version.pk and run["params"]["skip_articles"] == [completed["article"].pk]
    assert other.pk not in run["params"]["skip_articles"]
    assert rita.post(f"/api/model-versions/{version.pk}/realign/", {"scope": "some"}, format="json").status_code == 400
    # a crf run started without a model uses the promoted version
    assert alignment_runs.start_run(project, "crf", enqueue=False).model_version == version
    assert api(users["anna"]).post(f"/api/model-versions/{version.pk}/promote/").status_code == 403


def test_promoting_the_default_again_changes_and_records_nothing(project, users, tmp_path):
    version = ModelVersion.objects.create(project=project, name="crf-v1", kind="crf", path=str(tmp_path))
    training.promote(version, user=users["rita"])
    assert AuditEvent.objects.filter(action="model.promote").count() == 1
    training.promote(version, user=users["rita"])
    assert AuditEvent.objects.filter(action="model.promote").count() == 1
    project.refresh_from_db()
    assert project.config["default_model_version"] == version.pk


def test_realign_refuses_an_unknown_scope_and_a_version_of_another_kind(project, tmp_path):
    crf = ModelVersion.objects.create(project=project, name="crf-v1", kind="crf", path=str(tmp_path))
    encoder = ModelVersion.objects.create(project=project, name="enc", kind="bi-encoder", path=str(tmp_path))
    with pytest.raises(training.TrainingError, match="scope: choose all or unlabelled"):
        training.realign(crf, scope="some")
    with pytest.raises(training.TrainingError, match="'enc' is a bi-encoder model; crf runs use crf models"):
        training.realign(encoder)
    assert not project.runs.exists()


def test_a_version_whose_files_are_gone_cannot_be_zipped(project, tmp_path):
    version = ModelVersion.objects.create(project=project, name="crf-v9", kind="crf", path=str(tmp_path / "gone"))
    with pytest.raises(training.TrainingError, match="the files of crf-v9 are missing on this server"):
        training.zip_version(version)
    assert list(training.model_versions(project)) == [version]
