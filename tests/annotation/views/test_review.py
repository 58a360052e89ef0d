"""The review pages: researchers only, rendered tables, and a clear message without the chart library."""
from __future__ import annotations

import pytest

from tests.annotation.services.review.test_adjudication import make_pairs, vote


@pytest.fixture
def client_for(client):
    def login(user):
        client.force_login(user)
        return client
    return login


def test_researchers_get_both_pages_and_annotators_are_refused(client_for, users, project):
    researcher = client_for(users["rita"])
    assert researcher.get(f"/projects/{project.pk}/adjudicate/").status_code == 200
    assert researcher.get(f"/projects/{project.pk}/dashboard/").status_code == 200
    annotator = client_for(users["anna"])
    assert annotator.get(f"/projects/{project.pk}/adjudicate/").status_code == 403
    assert annotator.get(f"/projects/{project.pk}/dashboard/").status_code == 403
    assert client_for(users["olga"]).get(f"/projects/{project.pk}/dashboard/").status_code == 404


def test_the_dashboard_renders_progress_and_agreement_tables(client_for, users, project):
    [pair] = make_pairs(project, 1)
    vote(pair, users["anna"], "aligned")
    html = client_for(users["rita"]).get(f"/projects/{project.pk}/dashboard/").content.decode()
    assert 'id="annotators"' in html and 'data-annotator="anna"' in html
    assert 'id="agreement-summary"' in html and 'id="runs"' in html


def test_the_dashboard_lists_the_features_a_missing_pipeline_left_out(client_for, users, project):
    from annotation.models import AlignmentRun, Status

    run = AlignmentRun.objects.create(project=project, method="jaccard", status=Status.SUCCEEDED, result={
        "missing_features": {"access_dep_depth_ratio": "no dependency parser (spaCy pipeline 'en_core_web_sm' is not installed)"}})
    html = client_for(users["rita"]).get(f"/projects/{project.pk}/dashboard/").content.decode()
    assert 'id="missing-features"' in html and 'data-feature="access_dep_depth_ratio"' in html
    assert f"run #{run.pk} (jaccard)" in html and "is not installed" in html
    assert "en_core_web_sm" in html  # the pipeline the project uses, with its status


def test_without_the_vendor_scripts_the_dashboard_says_how_to_get_charts(client_for, users, project, monkeypatch):
    from annotation.views import review

    monkeypatch.setattr(review, "CHART_SCRIPTS", ("vendor/missing.js",))
    html = client_for(users["rita"]).get(f"/projects/{project.pk}/dashboard/").content.decode()
    assert "charts unavailable: run make setup" in html
    assert 'id="score-chart"' not in html and "vendor/" not in html


def test_the_project_page_links_researchers_to_the_review_pages(client_for, users, project):
    html = client_for(users["rita"]).get(f"/projects/{project.pk}/").content.decode()
    assert f"/projects/{project.pk}/dashboard/" in html and f"/projects/{project.pk}/adjudicate/" in html
    html = client_for(users["anna"]).get(f"/projects/{project.pk}/").content.decode()
    assert "/dashboard/" not in html


def test_a_big_projects_dashboard_says_its_figures_are_as_of_their_time_while_they_update(client_for, users, project,
                                                                                           monkeypatch):
    """Issue 37: a big project's first dashboard computes nothing while it answers: the page says "computing" (its
    script polls the API), the API answers 202 with the job, which one job computes; after a change the page shows
    the figures kept before it, saying so."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotation.models import Job
    from annotation.services.review import dashboard, review_state

    monkeypatch.setattr(review_state, "LAZY_ARTICLES", 1)
    pair, other = make_pairs(project, 2)
    vote(pair, users["anna"], "aligned")
    researcher = client_for(users["rita"])
    with CaptureQueriesContext(connection) as page_queries:
        html = researcher.get(f"/projects/{project.pk}/dashboard/").content.decode()
    assert 'id="figures-computing"' in html and '"computing": {"id":' in html and 'id="annotators"' not in html
    # no figure computed: only the state's whole-table marks touch the labels, nothing reads the project's labels
    assert not [q["sql"] for q in page_queries if "annotation_label" in q["sql"] and "annotation_candidatepair" in q["sql"]]
    answer = researcher.get(f"/api/projects/{project.pk}/dashboard/")
    assert answer.status_code == 202 and answer["Retry-After"] == "2"
    job = Job.objects.get(kind=dashboard.FIGURES_JOB)  # one job, however often asked
    assert answer.json()["status"] == "computing" and answer.json()["job"]["id"] == job.pk
    assert "being computed" in answer.json()["detail"]
    assert researcher.get(f"/api/projects/{project.pk}/agreement/").status_code == 202
    dashboard.run_figures_job(job.pk)  # the job, as a worker runs it
    html = researcher.get(f"/projects/{project.pk}/dashboard/").content.decode()
    assert 'id="figures-computing"' not in html and 'id="figures-as-of"' not in html and 'id="annotators"' in html
    assert researcher.get(f"/api/projects/{project.pk}/dashboard/").json()["progress"]["votes"] == 1
    Job.objects.filter(pk=job.pk).delete()  # long done (the next job is not held back by it)
    vote(other, users["anna"], "aligned")
    html = researcher.get(f"/projects/{project.pk}/dashboard/").content.decode()
    assert 'id="figures-as-of"' in html and "updating" in html
    api = researcher.get(f"/api/projects/{project.pk}/dashboard/").json()
    assert api["updating"] is True and api["figures_as_of"] and api["progress"]["votes"] == 1
