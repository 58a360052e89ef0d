"""Run scores against exhaustive gold where researchers look (issue 28 §3): ``GET /api/runs/<id>/``
(``scores``; lists leave them out), the compare API (both runs), the run's page, and the dashboard
saying what its maximum-F1 threshold's F1 is computed over. Values: ``scores_data.py``."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun
from tests.annotation.services.training.scores_data import TASK1, TASK2, scored_project

pytestmark = pytest.mark.django_db


def test_a_runs_detail_carries_its_scores_and_lists_leave_them_out(api, users, project):
    run = scored_project(project, users["anna"])["run"]
    client = api(users["rita"])
    scores = client.get(f"/api/runs/{run.pk}/").json()["scores"]
    assert scores["available"] and scores["n_articles"] == 2 and scores["too_few"]
    assert scores["task1"]["f1"] == pytest.approx(TASK1["f1"]) and scores["task2"]["f1"] == pytest.approx(TASK2["f1"])
    assert (scores["task1"]["tp"], scores["task1"]["n_pred"], scores["task1"]["n_gold"]) == (4, 6, 4)
    assert "too few to trust" in scores["warnings"][0]
    listed = client.get(f"/api/runs/?project={project.pk}").json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert [r["scores"] for r in rows if r["id"] == run.pk] == [None]


def test_a_poll_can_leave_the_scores_out_and_costs_fewer_queries(api, users, project):
    """``?scores=0`` (what the client's ``Run.wait()`` polls with): the same detail, ``scores`` null, without
    the queries that score the run against the gold."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    run = scored_project(project, users["anna"])["run"]
    client = api(users["rita"])
    with CaptureQueriesContext(connection) as scored:
        full = client.get(f"/api/runs/{run.pk}/").json()
    with CaptureQueriesContext(connection) as polled:
        light = client.get(f"/api/runs/{run.pk}/?scores=0").json()
    assert full["scores"]["available"] and light["scores"] is None
    assert {k: v for k, v in light.items() if k != "scores"} == {k: v for k, v in full.items() if k != "scores"}
    assert len(polled) < len(scored), (len(polled), len(scored))


def test_the_compare_api_scores_both_runs(api, users, project):
    run = scored_project(project, users["anna"])["run"]
    other = AlignmentRun.objects.create(project=project, method="tfidf", status="succeeded")  # linked nothing
    data = api(users["rita"]).get(f"/api/runs/compare/?old={other.pk}&new={run.pk}").json()
    assert data["scores"]["new"]["task1"]["f1"] == pytest.approx(0.8)
    old = data["scores"]["old"]
    assert old["available"] and (old["task1"]["tp"], old["task1"]["n_pred"], old["task1"]["n_gold"]) == (0, 0, 4)


def test_the_run_page_shows_the_scores_and_what_they_are_over(client, users, project):
    run = scored_project(project, users["anna"])["run"]
    client.force_login(users["rita"])
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="run-scores"' in html and "Scores against gold" in html
    assert '<td class="f1">0.800</td>' in html and '<td class="f1">0.333</td>' in html
    assert "Over <b>2</b> articles" in html and "false positive" in html
    assert "Identical pairs: identical sentence pairs" in html and "too few to trust (fewer than 5)" in html


def test_the_run_page_says_why_a_run_has_no_scores(client, users, project):
    run = AlignmentRun.objects.create(project=project, method="jaccard", status="succeeded")
    client.force_login(users["rita"])
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert "No scores: this project has no exhaustive gold" in html


def test_the_dashboard_says_what_its_maximum_f1_is_computed_over(client, api, users, project):
    client.force_login(users["rita"])
    html = client.get(f"/projects/{project.pk}/dashboard/").content.decode()
    assert 'id="max-f1-over"' in html and "computed over the run&#x27;s labelled pairs only" in html
    assert "not the run&#x27;s precision and recall" in html
    data = api(users["rita"]).get(f"/api/projects/{project.pk}/score-distribution/").json()
    assert "implied not-aligned pairs are left out" in data["max_f1_over"]


def test_a_big_projects_run_page_says_its_scores_are_as_of_their_time_while_they_update(client, users, project,
                                                                                         monkeypatch):
    from annotation.models import Job, Label
    from annotation.services.review import review_state
    from annotation.services.training import run_scores

    monkeypatch.setattr(review_state, "LAZY_ARTICLES", 1)
    run = scored_project(project, users["anna"])["run"]
    client.force_login(users["rita"])
    html = client.get(f"/runs/{run.pk}/").content.decode()  # nothing kept yet: computing, one job
    assert 'id="run-scores-computing"' in html and '"scores_computing": true' in html and 'class="f1"' not in html
    assert client.get(f"/api/runs/{run.pk}/").status_code == 202  # the run's API too (the page's script polls it)
    job = Job.objects.get(kind=run_scores.SCORES_JOB, params={"run": run.pk})
    run_scores.run_scores_job(job.pk)  # the job, as a worker runs it
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="run-scores-as-of"' not in html and 'id="run-scores-computing"' not in html
    assert client.get(f"/api/runs/{run.pk}/").json()["scores"]["current"] is True
    Job.objects.filter(pk=job.pk).delete()  # long done (the next job is not held back by it)
    Label.objects.filter(pair__article__project=project).delete()
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="run-scores-as-of"' in html and '<td class="f1">0.800</td>' in html  # the scores before, said so
