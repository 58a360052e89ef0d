"""The review API: researchers only (annotators 403, outsiders 404), queue, decisions, gold,
agreement, dashboard, score distribution and calibration."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, AdjudicationChange, AlignmentRun, Membership
from tests import factories
from tests.annotation.services.review.test_adjudication import make_pairs, vote

GETS = ["adjudication", "agreement", "dashboard", "score-distribution"]
POSTS = [("adjudication", {"pair": 0, "value": "aligned"}), ("gold", {"policy": "majority", "confirm": True}),
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
    response = api(users["rita"]).post(url(project, "gold"), {"policy": "majority", "confirm": True}, format="json")
    assert response.status_code == 200
    assert response.json()["created"] == 2 and response.json()["ties"] == 1 and response.json()["applied"] is True
    assert response.json()["gold"] == {"majority": 2}
    assert {c.changed_by for c in AdjudicationChange.objects.all()} == {users["rita"]}


def test_automatic_gold_without_confirmation_only_answers_the_preview(api, users, project, disagreement):
    client = api(users["rita"])
    preview = client.get(url(project, "gold") + "?policy=majority").json()
    assert preview == {"policy": "majority", "applied": False, "created": 2, "updated": 0, "unchanged": 0, "removed": 0,
                       "ties": 1, "total": 2, "gold": {}}
    assert client.post(url(project, "gold"), {"policy": "majority"}, format="json").json() == preview
    assert not Adjudication.objects.exists()
    assert client.get(url(project, "gold") + "?policy=everyone").status_code == 400


def test_automatic_gold_applies_with_the_previewed_count_and_refuses_a_stale_one(api, users, project, disagreement):
    client = api(users["rita"])
    stale = client.post(url(project, "gold"), {"policy": "majority", "expected": 5}, format="json")
    assert stale.status_code == 409 and stale.json()["total"] == 2 and "would now decide 2 items" in stale.json()["detail"]
    assert not Adjudication.objects.exists()
    done = client.post(url(project, "gold"), {"policy": "majority", "expected": 2}, format="json")
    assert done.status_code == 200 and done.json()["created"] == 2 and Adjudication.objects.count() == 2


def test_a_reviewer_changes_a_decision_sees_its_history_and_reverts_it(api, users, project, disagreement):
    client = api(users["rita"])
    pair = disagreement[0].pk
    client.post(url(project, "adjudication"), {"pair": pair, "value": "partial", "note": "clause dropped"}, format="json")
    changed = client.post(url(project, "adjudication"), {"pair": pair, "value": "aligned"}, format="json")
    assert changed.status_code == 200 and changed.json()["remaining"] == 0
    decided = client.get(url(project, "adjudication/decided")).json()
    assert decided["count"] == 1 and decided["results"][0]["gold"]["value"] == "aligned"
    item = client.get(url(project, f"adjudication/{pair}")).json()
    assert [(h["action"], h["old"] and h["old"]["value"], h["new"]["value"], h["by"]) for h in item["history"]] == [
        ("decide", None, "partial", "rita"), ("change", "partial", "aligned", "rita")]
    assert item["revert_to"] == {"value": "partial", "provenance": "adjudicated"} and len(item["votes"]) == 2
    reverted = client.post(url(project, f"adjudication/{pair}/revert"), format="json")
    assert reverted.status_code == 200
    assert reverted.json()["gold"]["value"] == "partial" and reverted.json()["history"][-1]["action"] == "revert"
    assert Adjudication.objects.get(pair_id=pair).note == "clause dropped"
    emptied = client.post(url(project, f"adjudication/{pair}/revert"), format="json").json()
    assert emptied["gold"] is None and emptied["revert_to"] is None and emptied["remaining"] == 1
    again = client.post(url(project, f"adjudication/{pair}/revert"), format="json")
    assert again.status_code == 400 and "no gold change to revert" in str(again.json())


def test_history_and_revert_are_for_the_projects_researchers_only(api, users, project, disagreement):
    pair = disagreement[0].pk
    api(users["rita"]).post(url(project, "adjudication"), {"pair": pair, "value": "partial"}, format="json")
    for path in (f"adjudication/{pair}", "adjudication/decided"):
        assert api(users["anna"]).get(url(project, path)).status_code == 403
        assert api(users["olga"]).get(url(project, path)).status_code == 404
    assert api(users["anna"]).post(url(project, f"adjudication/{pair}/revert"), format="json").status_code == 403
    assert Adjudication.objects.get(pair_id=pair).value == "partial"
    other = make_pairs(factories.make_project("Third"), 1)[0]
    assert api(users["rita"]).get(url(project, f"adjudication/{other.pk}")).status_code == 404
    assert api(users["rita"]).post(url(project, f"adjudication/{other.pk}/revert"), format="json").status_code == 404


def test_agreement_and_dashboard_carry_the_numbers_the_page_shows(api, users, project, disagreement):
    client = api(users["rita"])
    result = client.get(url(project, "agreement")).json()
    assert result["values"]["items_multi"] == 3 and result["values"]["cohen"][0]["observed"] == pytest.approx(2 / 3)
    board = client.get(url(project, "dashboard")).json()
    assert {r["annotator"] for r in board["annotators"]} == {"anna", "bob"}
    assert board["progress"]["review_queue"] == 1


def test_calibrate_stores_thresholds_and_the_distribution_shows_them(api, users, project, disagreement):
    client = api(users["rita"])
    response = client.post(url(project, "calibrate"), {"method": "mean-valid"}, format="json")
    assert response.status_code == 400 and "WIVICO's rule is for wivico runs" in response.json()["detail"]
    AlignmentRun.objects.filter(project=project).update(method="wivico")
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
