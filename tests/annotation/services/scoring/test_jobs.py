"""Scoring jobs (``scoring/jobs.py``): a request parsed and refused before any job exists, a job run once.
Each kind's own scoring is tested beside it, in ``kinds/test_<kind>.py``."""
from __future__ import annotations

import pytest

from annotation.models import Job
from annotation.services.scoring import jobs as scoring
from tests import factories
from tests.annotation.services.scoring.helpers import parallel, run_job, start

pytestmark = pytest.mark.django_db


def test_a_finished_job_is_not_run_again(project):
    parallel(project, "p", [("The cat sat on the mat.", "A cat sat.")])
    job = run_job(project, "access-attributes", parser=None)
    finished = job.finished_at
    scoring.run_scoring_job(job.pk)
    job.refresh_from_db()
    assert job.finished_at == finished and job.attempts == 1


# --- validation ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kind,params,message", [
    ("magic", {}, "unknown scoring kind 'magic'"),
    ("access-attributes", {"colour": 1}, "colour: unknown option"),
    ("sum4simp-filter", {}, "needs reference_project"),
    ("sum4simp-filter", {"reference_project": "Nope"}, "reference project 'Nope' not found"),
    ("pivot-select", {"h_bleu": "high"}, "h_bleu: must be a float, got 'high'"),
    ("pivot-select", {"h_bleu": 101}, "h_bleu: must be <= 100, got 101"),
    ("pivot-select", {"orient": "yes"}, "orient: must be a bool"),
    ("wivico-thresholds", {"propagation": "up"}, "propagation: unknown propagation 'up'; choose one of: paper, offset"),
    ("access-attributes", {"run": 999999}, "run 999999 is not a run of project"),
    ("gain-classifier", {"model_version": 12345}, "is not a gain-classifier of project"),
])
def test_bad_requests_are_refused_before_a_job_is_created(project, kind, params, message):
    with pytest.raises(scoring.ScoringRefused) as info:  # a DomainError: its status and code reach the client
        start(project, kind, params)
    assert message in str(info.value) and Job.objects.count() == 0
    assert info.value.status == 400 and info.value.code


def test_a_reference_project_must_hold_imported_pairs(project, users):
    empty = factories.make_project("Empty", rita="researcher")
    with pytest.raises(scoring.ScoringRefused, match="has no imported pairs"):
        start(project, "gain-classifier", {"reference_project": empty.pk})
