"""The paragraph-proposal API: an annotator's save is a proposal; researchers list, accept and reject
proposals; who may see and decide them."""
from __future__ import annotations

import pytest

from annotation.models import ParagraphAlignment, ParagraphProposal
from tests import factories
from tests.annotation.services.editing.test_paragraph_correction import COMPLEX, SIMPLE

MOVED = {"links": [{"complex": 0, "simple": 0}, {"complex": 1, "simple": 1}, {"complex": 2, "simple": 1}]}


@pytest.fixture
def article(project):
    return factories.make_article(project, "News", {"adv": COMPLEX, "int": SIMPLE})


def paragraphs(article) -> str:
    return f"/api/articles/{article.pk}/paragraphs/"


def listing(project, query: str = "") -> str:
    return f"/api/projects/{project.pk}/paragraph-proposals/" + (f"?{query}" if query else "")


@pytest.fixture
def proposal(api, users, article) -> ParagraphProposal:
    response = api(users["anna"]).put(paragraphs(article), MOVED, format="json")
    assert response.status_code == 200, response.json()
    return ParagraphProposal.objects.get()


def test_an_annotators_save_answers_that_it_went_for_review_and_changes_no_link(api, users, article):
    data = api(users["anna"]).put(paragraphs(article), MOVED, format="json").json()
    assert data["saved"]["applied"] is False and data["saved"]["proposal"]["status"] == "pending"
    assert (data["saved"]["added"], data["saved"]["removed"]) == (1, 1)
    assert data["origin"] == "computed" and data["candidate_pairs"] == 0
    assert not ParagraphAlignment.objects.exists()


def test_a_researchers_save_applies_at_once(api, users, article):
    data = api(users["rita"]).put(paragraphs(article), MOVED, format="json").json()
    assert data["saved"]["applied"] is True and data["origin"] == "stored" and data["candidate_pairs"] == 4 + 4 + 6
    assert not ParagraphProposal.objects.exists()


def test_with_the_direct_setting_an_annotators_save_applies_at_once(api, users, article):
    article.project.config = {"paragraph_corrections": "direct"}
    article.project.save()
    data = api(users["anna"]).put(paragraphs(article), MOVED, format="json").json()
    assert data["saved"]["applied"] is True and data["origin"] == "stored"
    assert not ParagraphProposal.objects.exists()


def test_researchers_list_pending_proposals_with_their_diff_and_annotators_only_their_own(api, users, project, article,
                                                                                      proposal):
    rows = api(users["rita"]).get(listing(project)).json()
    assert rows["count"] == 1
    [item] = rows["results"]
    assert (item["id"], item["proposed_by"], item["status"]) == (proposal.pk, "anna", "pending")
    assert item["diff"] == {"added": [[2, 1]], "removed": [[2, 2]], "kept": 2}
    assert item["accept_url"] == f"/api/paragraph-proposals/{proposal.pk}/accept/"
    assert item["page_url"].startswith(f"/articles/{article.pk}/paragraphs/?complex=")
    here = f"article={article.pk}&complex={proposal.complex_document_id}&simple={proposal.simple_document_id}"
    assert api(users["rita"]).get(listing(project, here)).json()["count"] == 1
    assert api(users["rita"]).get(listing(project, "status=accepted")).json()["count"] == 0
    assert api(users["rita"]).get(listing(project, "status=open")).status_code == 400
    assert api(users["anna"]).get(listing(project)).json()["count"] == 1
    bob = factories.make_user("bob")
    project.memberships.create(user=bob, role="annotator")
    assert api(bob).get(listing(project)).json()["count"] == 0
    assert api(bob).get(f"/api/paragraph-proposals/{proposal.pk}/").status_code == 403
    assert api(users["anna"]).get(f"/api/paragraph-proposals/{proposal.pk}/").json()["diff"]["added"] == [[2, 1]]
    assert api(users["olga"]).get(listing(project)).status_code == 404
    assert api(users["ursula"]).get(f"/api/paragraph-proposals/{proposal.pk}/").status_code == 404


def test_a_researcher_accepts_a_proposal_and_the_links_and_candidates_follow(api, users, article, proposal):
    response = api(users["rita"]).post(f"/api/paragraph-proposals/{proposal.pk}/accept/", {"note": "yes"}, format="json")
    assert response.status_code == 200, response.json()
    data = response.json()
    assert data["proposal"]["status"] == "accepted" and data["proposal"]["decided_by"] == "rita"
    assert data["saved"]["candidates"]["pairs"] == 4 + 4 + 6
    state = api(users["anna"]).get(paragraphs(article)).json()
    assert {(link["complex"], link["simple"]) for link in state["links"] if link["active"]} == {(0, 0), (1, 1), (2, 1)}
    again = api(users["rita"]).post(f"/api/paragraph-proposals/{proposal.pk}/reject/", {}, format="json")
    assert again.status_code == 409 and "already accepted" in again.json()["detail"]


def test_a_researcher_rejects_a_proposal_with_a_note_and_the_links_stay(api, users, article, proposal):
    response = api(users["rita"]).post(f"/api/paragraph-proposals/{proposal.pk}/reject/", {"note": "¶2 matches ¶2"},
                                       format="json")
    assert response.status_code == 200 and response.json()["proposal"]["note"] == "¶2 matches ¶2"
    assert not ParagraphAlignment.objects.exists()
    assert api(users["anna"]).get(listing(article.project, "status=rejected")).json()["results"][0]["note"] == "¶2 matches ¶2"


@pytest.mark.parametrize("role,expected", [("anna", 403), ("olga", 404), ("ursula", 404)])
def test_only_the_projects_researchers_decide(api, users, proposal, role, expected):
    for action in ("accept", "reject"):
        response = api(users[role]).post(f"/api/paragraph-proposals/{proposal.pk}/{action}/", {}, format="json")
        assert response.status_code == expected
    proposal.refresh_from_db()
    assert proposal.status == ParagraphProposal.PENDING and not ParagraphAlignment.objects.exists()


def test_the_paragraph_page_tells_annotators_their_corrections_are_proposals(client, users, article):
    client.force_login(users["anna"])
    html = client.get(f"/articles/{article.pk}/paragraphs/").content.decode()
    assert "Send for review" in html and 'id="proposal-note"' in html and 'id="proposals"' not in html
    client.force_login(users["rita"])
    html = client.get(f"/articles/{article.pk}/paragraphs/").content.decode()
    assert "Save and regenerate candidates" in html and 'id="proposals"' in html
