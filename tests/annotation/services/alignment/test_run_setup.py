"""A run's setup (``alignment.run_setup``): the options the project gives a run of its method (stored by a
job, calibrated on an earlier run of the same method) unless its params set them; shared or one-chunk runs;
the aligner loaded once per run and process."""
from __future__ import annotations

import pytest

from annotation.models import MINING_METHOD, AlignmentRun, Status
from annotation.services.alignment import run_setup

pytestmark = pytest.mark.django_db


def _run(project, method="jaccard", **params) -> AlignmentRun:
    return AlignmentRun.objects.create(project=project, method=method, status=Status.QUEUED, params=params)


def test_calibrated_thresholds_apply_to_runs_of_the_calibrated_method_only(project):
    source = _run(project)
    project.config = {"thresholds": {"source_run": source.pk, "aligned": 0.7, "partial": 0.4}}
    project.save()
    assert run_setup.defaults_of(_run(project)) == {"aligned_threshold": 0.7, "partial_threshold": 0.4}
    assert run_setup.defaults_of(_run(project, "tfidf")) == {}  # scores of another method are not comparable
    assert run_setup.defaults_of(_run(project, aligned_threshold=0.9)) == {}  # the run's own params win


def test_without_partial_labels_the_partial_cut_off_stays_at_most_the_aligned_one(project):
    source = _run(project)
    project.config = {"thresholds": {"source_run": source.pk, "aligned": 0.05}}
    project.save()
    assert run_setup.calibrated_defaults(project, "jaccard", {}) == {"aligned_threshold": 0.05,
                                                                    "partial_threshold": 0.05}


def test_a_jobs_stored_method_settings_are_a_runs_defaults_unless_it_sets_any(project):
    project.config = {"wivico": {"threshold": 0.6, "propagation": True, "unrelated": 1}}
    project.save()
    assert run_setup.project_method_defaults(project, "wivico", {}) == {"threshold": 0.6, "propagation": True}
    assert run_setup.project_method_defaults(project, "wivico", {"threshold": 0.5}) == {}
    assert run_setup.project_method_defaults(project, "jaccard", {}) == {}


def test_shared_runs_are_the_pair_level_methods(project):
    assert run_setup.is_shared(_run(project, "jaccard"))
    assert not run_setup.is_shared(_run(project, "wivico"))  # run-level: one chunk after a first pass
    assert not run_setup.is_shared(_run(project, MINING_METHOD))


def test_the_language_tools_name_the_encoder_and_the_pipeline_unless_access_is_off(project):
    tools = run_setup.language_tools(_run(project))
    assert tools["encoder"] and tools["spacy_pipeline"]
    assert run_setup.language_tools(_run(project, access_attributes=False))["spacy_pipeline"] is None
    assert run_setup.access_scorer(_run(project, access_attributes=False)) is None


def test_the_aligner_is_loaded_once_per_run_and_process(project):
    run = _run(project)
    first = run_setup.load(run)
    assert run_setup.load(AlignmentRun.objects.get(pk=run.pk)) is first
    other = run_setup.load(_run(project))
    assert other is not first and run_setup.load(run) is not first  # one run's models at a time
