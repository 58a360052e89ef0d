"""The comparison of two runs as the API answers it (issue 37): a small project's at once, a big project's first one
from one ``run-comparison`` job (the API answers 202 meanwhile), equal to a fresh comparison once the job ran."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.errors import BeingComputed
from annotation.models import AlignmentRun, Job, RunComparison, Status
from annotation.services.alignment import run_comparison
from annotation.services.review import review_state
from annotation.services.training import comparison_answer, run_scores
from tests.annotation.services.training.scores_data import scored_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_runs(project, users):
    new = scored_project(project, users["anna"])["run"]
    old = AlignmentRun.objects.create(project=project, method="tfidf", status=Status.SUCCEEDED)  # linked nothing
    return old, new


def fresh(old, new) -> dict:
    return {**run_comparison._compare(old, new, pairs=True, offset=0, limit=run_comparison.CHANGES_PAGE),
            "scores": {"old": run_scores.compute_run_scores(old), "new": run_scores.compute_run_scores(new)}}


def test_a_small_projects_comparison_is_answered_at_once(two_runs):
    old, new = two_runs
    assert comparison_answer.api_comparison(old, new, pairs=True) == fresh(old, new)
    assert not Job.objects.exists()


def test_a_big_projects_first_comparison_is_left_to_one_job_and_equals_a_fresh_one_once_it_ran(two_runs, monkeypatch):
    monkeypatch.setattr(review_state, "LAZY_ARTICLES", 1)
    old, new = two_runs
    for _ in range(3):
        with CaptureQueriesContext(connection) as asked, pytest.raises(BeingComputed) as pending:
            comparison_answer.api_comparison(old, new, pairs=True)
        assert pending.value.job["kind"] == comparison_answer.COMPARISON_JOB
        assert not [q["sql"] for q in asked if "annotation_prediction" in q["sql"] and "JOIN" in q["sql"]]  # nothing compared
        assert len(asked) <= 12, [q["sql"] for q in asked]
    job = Job.objects.get(kind=comparison_answer.COMPARISON_JOB)  # one job, however often asked
    assert job.params == {"old": old.pk, "new": new.pk} and not RunComparison.objects.exists()
    comparison_answer.comparison_job(job.pk)  # as a worker runs it
    assert Job.objects.get(pk=job.pk).status == Status.SUCCEEDED and RunComparison.objects.count() == 1
    answer = comparison_answer.api_comparison(old, new, pairs=True)
    expected = fresh(old, new)
    for side in ("old", "new"):  # a big project's scores say what state they are of
        assert answer["scores"][side].pop("current") is True and answer["scores"][side].pop("as_of")
    assert answer == expected


def test_runs_that_cannot_be_compared_are_refused_before_any_job(two_runs, monkeypatch):
    monkeypatch.setattr(review_state, "LAZY_ARTICLES", 1)
    old, _ = two_runs
    with pytest.raises(run_comparison.ComparisonError, match="two different runs"):
        comparison_answer.api_comparison(old, old)
    assert not Job.objects.exists()


def test_the_api_answers_202_with_the_job_then_the_comparison(api, users, two_runs, monkeypatch):
    monkeypatch.setattr(review_state, "LAZY_ARTICLES", 1)
    old, new = two_runs
    researcher = api(users["rita"])
    answer = researcher.get(f"/api/runs/compare/?old={old.pk}&new={new.pk}&pairs=1")
    assert answer.status_code == 202 and answer["Retry-After"] == "2"
    body = answer.json()
    job = Job.objects.get(kind=comparison_answer.COMPARISON_JOB)
    assert body["status"] == "computing" and body["retry_after"] == 2 and body["job"]["id"] == job.pk
    assert body["job"]["status"] == Status.QUEUED and body["job"]["created_at"] and "runs #" in body["detail"]
    comparison_answer.comparison_job(job.pk)
    answer = researcher.get(f"/api/runs/compare/?old={old.pk}&new={new.pk}&pairs=1")
    assert answer.status_code == 200 and answer.json()["changes_total"] == fresh(old, new)["changes_total"]
