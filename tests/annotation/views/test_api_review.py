"""The review API: researchers only (annotators 403, outsiders 404), queue, decisions, gold,
agreement, dashboard, score distribution and calibration."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, Membership
from tests import factories
from tests.annotation.services.test_adjudication import make_pairs, vote

GETS = ["adjudication", "agreement", "dashboard", "score-distribution"]
POSTS = [("adjudication", {"pair": 0, "value": "aligned"}), ("gold", {"policy": "majority"}),
         ("calibrate", {"method": "mean-valid"})]


def url(project, name: str) -> str:
    return f"/api/projects/{project.pk}/{name}/"


@pytest.fixture
def disagreement(project, users):
    bob = factories.make_user("bob")
    Membership.objects.create(project=project, user=bob, role="annotator")
    pairs = make_pairs(project, 3, scores=[0.9, 0.6, 0.2])
    vote(pairs[0], users["anna"], "aligned"), vote(pairs[0], bob, "partial")
    vote(pairs[1], users["anna"], "partial"), vote(pairs[1], bob, "partial")
    vote(pairs[2], users["anna"], "not-aligned"), vote(pairs[2], bob, "not-aligned")
    return pairs


@pytest.mark.parametrize("name", GETS)
def test_annotators_are_refused_and_outsiders_do_not_see_the_project(api, users, project, name):
    assert api(users["anna"]).get(url(project, name)).status_code == 403
    assert api(users["olga"]).get(url(project, name)).status_code == 404
    assert api(users["ursula"]).get(url(project, name)).status_code == 404
    assert api().get(url(project, name)).status_code in (401, 403)


@pytest.mark.parametrize("name,body", POSTS)
def test_annotators_cannot_decide_make_gold_or_calibrate(api, users, project, disagreement, name, body):
    body = {**body, "pair": disagreement[0].pk} if "pair" in body else body
    assert api(users["anna"]).post(url(project, name), body, format="json").status_code == 403
    assert api(users["olga"]).post(url(project, name), body, format="json").status_code == 404
    assert not Adjudication.objects.exists()


@pytest.mark.parametrize("name", GETS)
def test_researchers_and_admins_read_every_review_endpoint(api, users, project, disagreement, name):
    for user in (users["rita"], users["admin"]):
        assert api(user).get(url(project, name)).status_code == 200


def test_the_queue_is_paginated_and_a_decision_answers_with_what_remains(api, users, project, disagreement):
    client = api(users["rita"])
    page = client.get(url(project, "adjudication")).json()
    assert page["count"] == 1 and page["results"][0]["pair"] == disagreement[0].pk
    assert len(page["results"][0]["votes"]) == 2 and "score" not in page["results"][0]
    assert client.get(url(project, "adjudication") + "?score=1").json()["results"][0]["score"] == 0.9
    assert client.get(url(project, "adjudication") + "?mode=all&page_size=2").json()["count"] == 3
    response = client.post(url(project, "adjudication"), {"pair": disagreement[0].pk, "value": "partial",
                                                           "note": "clause dropped"}, format="json")
    assert response.status_code == 201
    assert response.json()["adjudication"]["provenance"] == "adjudicated" and response.json()["remaining"] == 0
    again = client.post(url(project, "adjudication"), {"pair": disagreement[0].pk, "value": "aligned"}, format="json")
    assert again.status_code == 200 and Adjudication.objects.get().value == "aligned"


def test_bad_decisions_are_refused_with_a_reason(api, users, project, disagreement):
    client = api(users["rita"])
    bad = client.post(url(project, "adjudication"), {"pair": disagreement[0].pk, "value": "valid"}, format="json")
    assert bad.status_code == 400 and "choose one of" in str(bad.json()["value"])
    other = make_pairs(factories.make_project("Third"), 1)[0]
    assert client.post(url(project, "adjudication"), {"pair": other.pk, "value": "aligned"},
                       format="json").status_code == 404
    assert client.get(url(project, "adjudication") + "?mode=some").status_code == 400


def test_automatic_gold_reports_what_it_did(api, users, project, disagreement):
    response = api(users["rita"]).post(url(project, "gold"), {"policy": "majority"}, format="json")
    assert response.status_code == 200
    assert response.json()["created"] == 2 and response.json()["ties"] == 1
    assert response.json()["gold"] == {"majority": 2}


def test_agreement_and_dashboard_carry_the_numbers_the_page_shows(api, users, project, disagreement):
    client = api(users["rita"])
    result = client.get(url(project, "agreement")).json()
    assert result["values"]["items_multi"] == 3 and result["values"]["cohen"][0]["observed"] == pytest.approx(2 / 3)
    board = client.get(url(project, "dashboard")).json()
    assert {r["annotator"] for r in board["annotators"]} == {"anna", "bob"}
    assert board["progress"]["review_queue"] == 1


def test_calibrate_stores_thresholds_and_the_distribution_shows_them(api, users, project, disagreement):
    client = api(users["rita"])
    client.post(url(project, "adjudication"), {"pair": disagreement[0].pk, "value": "aligned"}, format="json")
    distribution = client.get(url(project, "score-distribution")).json()
    assert distribution["suggested"]["mean-valid"]["aligned"] == 0.9 and distribution["current"] is None
    response = client.post(url(project, "calibrate"), {"method": "mean-valid"}, format="json")
    assert response.status_code == 200 and response.json()["aligned"] == 0.9
    project.refresh_from_db()
    assert project.config["thresholds"]["method"] == "mean-valid" and project.config["wivico"]["threshold"] == 0.9
    assert client.get(url(project, "score-distribution")).json()["current"]["aligned"] == 0.9
    assert client.post(url(project, "calibrate"), {"method": "median"}, format="json").status_code == 400
    assert client.get(url(project, "score-distribution") + "?run=999999").status_code == 400
