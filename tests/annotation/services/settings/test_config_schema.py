"""The one schema of a project's config: each key's rule, and every value the app itself writes passes it."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, ModelVersion, Status
from annotation.services.alignment import run_options
from annotation.services.export import splits
from annotation.services.projects import guidelines, language_tools
from annotation.services.scoring import calibration
from annotation.services.settings import config_schema, project_settings
from annotation.services.training import versions
from tests import factories
from tests.annotation.services.scoring.test_calibration import labelled  # noqa: F401 - fixture


@pytest.mark.parametrize("config", [
    {},
    {"show_predictions": True, "adjudicate": "all", "adjudicate_show_score": False},
    {"qc": {"overlap": 3, "min_seconds": 2.5, "test_every": 0, "exclusion_threshold": 0.8, "min_test_answers": 5}},
    {"paragraph_corrections": "direct", "queue_order": "uncertainty", "queue_uncertainty": "disagreement",
     "queue_identical": True, "queue_run": None, "queue_changes": None},
    {"encoder": "all-MiniLM-L6-v2", "spacy_pipeline": "fr_core_news_sm", "guidelines": "# Label\nwell"},
    {"paragraph_alignment": {"similarity": "tfidf"}, "candidate_selection": {"measures": ["tfidf"], "k": 2},
     "candidates": "all-in-paragraphs"},
    {"splits": {"mode": "counts", "train": 3, "dev": 1, "test": 1}},
    {"wivico": {"threshold": 0.7, "partial_threshold": 0.5, "propagation": "offset", "derived_from": {"run": 1}}},
    {"thresholds": {"aligned": 0.8, "partial": None, "method": "max-f1", "pairs": {"aligned": 3}, "source_run": 4}},
])
def test_valid_configs_pass(config):
    assert config_schema.checked(config) == config


@pytest.mark.parametrize("config,key,words", [
    ({"colour": "red"}, "colour", "unknown setting; valid: adjudicate, adjudicate_show_score"),
    ({"show_predictions": "yes"}, "show_predictions", "must be a bool, got 'yes'"),
    ({"adjudicate": "some"}, "adjudicate", "unknown adjudicate 'some'; choose one of: disagreements, all"),
    ({"qc": {"overlap": 11}}, "qc", "overlap: must be <= 10, got 11"),
    ({"qc": {"speed": 1}}, "qc", "speed: unknown option"),
    ({"qc": [1]}, "qc", "must be an object"),
    ({"encoder": "a\nb"}, "encoder", "without line breaks"),
    ({"encoder": 5}, "encoder", "must be a str, got 5"),
    ({"guidelines": "x" * (guidelines.MAX_LENGTH + 1)}, "guidelines", "at most 50,000 characters"),
    ({"queue_order": "newest"}, "queue_order", "choose one of: corpus, random, uncertainty"),
    ({"queue_run": "7"}, "queue_run", "must be an int, got '7'"),
    ({"queue_run": 2**63}, "config", "queue_run: integer out of range"),
    ({"queue_changes": {"old": 1}}, "queue_changes", "must be {\"old\""),
    ({"queue_changes": {"old": 1, "new": 1}}, "queue_changes", "two different runs"),
    ({"default_model_version": True}, "default_model_version", "must be an int, got True"),
    ({"candidates": "every"}, "candidates", "unknown candidates 'every'; choose one of: all-in-paragraphs, selected"),
    ({"candidate_selection": {"k": 0}}, "candidate_selection", "k: must be >= 1, got 0"),
    ({"paragraph_alignment": {"variant": "wiki", "thresholds": {"tau1": "high"}}}, "paragraph_alignment",
     "thresholds: must map tau1, tau2, tau3, tau4, tau5 to numbers (the wiki variant's)"),
    ({"splits": {"train": -1}}, "splits", "non-negative number"),
    ({"wivico": {"threshold": 2.0}}, "wivico", "threshold"),
    ({"wivico": {"colour": 1}}, "wivico", "unknown key(s) colour"),
    ({"thresholds": {"aligned": "high"}}, "thresholds", "aligned: must be a float, got 'high'"),
    ({"thresholds": {"aligned": 0.8, "method": "guess"}}, "thresholds", "unknown method 'guess'; choose one of: mean-valid, max-f1"),
    ({"guidelines": "\ud800"}, "config", "surrogate"),
])
def test_each_bad_value_is_refused_naming_the_key(config, key, words):
    with pytest.raises(config_schema.ConfigError) as refused:
        config_schema.checked(config)
    assert words in refused.value.errors[key]


def test_every_bad_key_is_reported_at_once():
    with pytest.raises(config_schema.ConfigError) as refused:
        config_schema.checked({"adjudicate": "x", "queue_order": "y", "show_predictions": 1})
    assert sorted(refused.value.errors) == ["adjudicate", "queue_order", "show_predictions"]


def test_a_config_that_is_not_an_object_lists_the_valid_keys():
    with pytest.raises(config_schema.ConfigError, match="valid keys: adjudicate, adjudicate_show_score"):
        config_schema.checked(["qc"])


def test_runs_and_model_versions_must_be_the_projects_own(users, project):
    other = factories.make_project("Elsewhere")
    theirs = AlignmentRun.objects.create(project=other, method="jaccard", status=Status.SUCCEEDED)
    ours = AlignmentRun.objects.create(project=project, method="jaccard", status=Status.SUCCEEDED)
    version = ModelVersion.objects.create(project=other, name="v", kind="crf", path="/tmp/v")
    for config, key in [({"queue_run": theirs.pk}, "queue_run"), ({"default_model_version": version.pk}, "default_model_version"),
                        ({"queue_changes": {"old": ours.pk, "new": theirs.pk}}, "queue_changes"),
                        ({"thresholds": {"aligned": 0.5, "source_run": theirs.pk}}, "thresholds")]:
        with pytest.raises(config_schema.ConfigError) as refused:
            config_schema.checked(config, project=project)
        assert "not a" in refused.value.errors[key] and "of this project" in refused.value.errors[key]
    assert config_schema.checked({"queue_run": ours.pk}, project=project)


def test_what_the_settings_page_and_the_services_write_passes_the_schema(users, project, labelled):  # noqa: F811
    project_settings.update_general(project, description="d", language="de", show_predictions=True, adjudicate="all",
                                    paragraph_corrections="direct")
    project_settings.update_qc(project, project_settings.parse_qc_form({"overlap": "2", "min_seconds": "1.5"}))
    language_tools.update(project, encoder="all-MiniLM-L6-v2", spacy_pipeline="fr_core_news_sm")
    guidelines.update(project, "# Our rules")
    splits.assign(project, {"mode": "ratio", "train": 0.5, "dev": 0.25, "test": 0.25})
    calibration.calibrate(project, "mean-valid")  # thresholds and WIVICO's nine cut-offs
    project.refresh_from_db()
    version = ModelVersion.objects.create(project=project, name="v1", kind=run_options.MODEL_KIND, path="/tmp/v1")
    versions.promote(version)
    project.refresh_from_db()
    assert {"qc", "encoder", "guidelines", "splits", "thresholds", "wivico", "default_model_version"} <= set(project.config)
    assert config_schema.checked(project.config, project=project) == project.config
    calibration.calibrate(project, "max-f1")  # its thresholds carry F1 figures too
    project.refresh_from_db()
    assert config_schema.checked(project.config, project=project) == project.config
