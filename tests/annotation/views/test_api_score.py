"""``POST /api/projects/<id>/score/``: researchers queue scoring jobs; others are refused."""
from __future__ import annotations

import pytest

from annotation.models import Job, Status
from tests import factories

pytestmark = pytest.mark.django_db


def test_a_researcher_queues_a_scoring_job_and_gets_it_back(api, users, project):
    response = api(users["rita"]).post(f"/api/projects/{project.pk}/score/",
                                       {"kind": "pivot-select", "params": {"h_bleu": 20}}, format="json")
    assert response.status_code == 202, response.content
    job = Job.objects.get(pk=response.json()["id"])
    assert (job.kind, job.params, job.status, job.created_by) == ("pivot-select", {"h_bleu": 20.0}, Status.QUEUED, users["rita"])


def test_params_may_be_given_at_the_top_level(api, users, project):
    response = api(users["rita"]).post(f"/api/projects/{project.pk}/score/",
                                       {"kind": "access-attributes", "parser": None}, format="json")
    assert response.status_code == 202 and response.json()["params"] == {"parser": None}


def test_an_annotator_cannot_start_a_scoring_job(api, users, project):
    response = api(users["anna"]).post(f"/api/projects/{project.pk}/score/", {"kind": "pivot-select"}, format="json")
    assert response.status_code == 403 and Job.objects.count() == 0


def test_an_unknown_kind_is_a_400_listing_the_valid_ones(api, users, project):
    response = api(users["rita"]).post(f"/api/projects/{project.pk}/score/", {"kind": "magic"}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "unknown_scoring_kind"
    listed = "access-attributes, sum4simp-filter, wivico-thresholds, gain-classifier, pivot-select"
    assert listed in response.json()["detail"]


def test_a_bad_option_is_a_400_naming_it_with_the_kinds_options(api, users, project):
    response = api(users["rita"]).post(f"/api/projects/{project.pk}/score/",
                                       {"kind": "pivot-select", "params": {"h_bleu": 500, "colour": 1}}, format="json")
    body = response.json()
    assert response.status_code == 400 and body["code"] == "bad_scoring_params" and Job.objects.count() == 0
    assert body["params"] == {"h_bleu": "must be <= 100, got 500", "colour": "unknown option"}
    assert "h_bleu (float in [0, 100], default 15.0)" in body["valid_options"]


def test_a_reference_project_the_user_cannot_see_is_not_found(api, users, project):
    hidden = factories.make_project("Hidden corpus", ursula="researcher")
    response = api(users["rita"]).post(f"/api/projects/{project.pk}/score/",
                                       {"kind": "gain-classifier", "reference_project": hidden.pk}, format="json")
    assert response.status_code == 400 and "not found" in response.json()["detail"]
    assert response.json()["code"] == "reference_not_found"
