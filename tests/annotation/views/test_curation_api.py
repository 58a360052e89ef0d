"""The document workflow's API and pages: an annotator's articles by state (API and project page,
blind: no run named), and the researchers' curation API and page (annotators 403, outsiders 404)."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Adjudication, AlignmentRun, Membership, Status
from annotation.services.editing import article_alignment as aa
from annotation.services.editing import completion as ac
from tests import factories

COMPLEX = [["C0 the river flooded the town.", "C1 residents left their homes."]]
SIMPLE = [["S0 the river flooded the town.", "S1 people left."]]


@pytest.fixture
def article(project, users):
    project.config = {"qc": {"min_seconds": 0, "test_every": 0}}
    project.save()
    Membership.objects.create(project=project, user=factories.make_user("bea"), role="annotator")
    article = factories.make_article(project, "Flood", {"adv": COMPLEX, "int": SIMPLE})
    docs = aa.resolve_documents(article, None, None)
    bea = get_user_model().objects.get(username="bea")
    aa.save_links(users["anna"], article, *docs, None, [{"complex": 0, "simple": 0}, {"complex": 1, "simple": 1}])
    aa.save_links(bea, article, *docs, None, [{"complex": 0, "simple": 0}, {"complex": 1, "simple": 1, "label": "partial"}])
    ac.mark_complete(bea, article, *docs)
    return article


def curation_url(article, **query) -> str:
    return f"/api/articles/{article.pk}/curation/" + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def test_my_articles_lists_states_with_counts_and_filters(api, project, users, article):
    factories.make_article(project, "Quiet", {"adv": [["Q."]], "int": [["q."]]})
    AlignmentRun.objects.create(project=project, method="jaccard", status=Status.SUCCEEDED)
    response = api(users["anna"]).get(f"/api/projects/{project.pk}/my-articles/")
    assert response.status_code == 200
    body = response.json()
    assert body["counts"] == {"todo": 1, "in_progress": 1, "complete": 0, "all": 2}
    assert [(r["title"], r["state"], r["labels"]) for r in body["results"]] == [("Flood", "in_progress", 2), ("Quiet", "todo", 0)]
    assert "jaccard" not in response.content.decode() and "run" not in body["results"][0]  # blind: no run named
    bea = api(get_user_model().objects.get(username="bea")).get(f"/api/projects/{project.pk}/my-articles/?state=complete")
    assert [r["title"] for r in bea.json()["results"]] == ["Flood"]
    assert api(users["anna"]).get(f"/api/projects/{project.pk}/my-articles/?state=done").status_code == 400
    assert api(users["olga"]).get(f"/api/projects/{project.pk}/my-articles/").status_code == 404


def test_the_project_page_shows_the_annotators_states_and_filters_them(client, project, users, article):
    factories.make_article(project, "Quiet", {"adv": [["Q."]], "int": [["q."]]})
    client.force_login(users["anna"])
    html = client.get(f"/projects/{project.pk}/").content.decode()
    assert 'data-state="in_progress"' in html and 'data-state="todo"' in html
    assert "In progress <span class=\"count\">1</span>" in html and "To do <span class=\"count\">1</span>" in html
    filtered = client.get(f"/projects/{project.pk}/?state=todo").content.decode()
    assert "Quiet" in filtered and ">Flood<" not in filtered
    assert "Curate" not in client.get(f"/articles/{article.pk}/").content.decode()  # researchers only


def test_curation_api_is_for_researchers(api, users, article):
    assert api(users["anna"]).get(curation_url(article, a="anna", b="bea")).status_code == 403
    assert api(users["anna"]).post(curation_url(article, a="anna", b="bea"), {"decisions": []}, format="json").status_code == 403
    assert api(users["olga"]).get(curation_url(article)).status_code == 404
    assert api(users["ursula"]).get(curation_url(article)).status_code == 404
    assert api(None).get(curation_url(article)).status_code in (401, 403)


def test_curation_api_compares_and_decides(api, users, article):
    rita = api(users["rita"])
    listed = rita.get(curation_url(article)).json()
    assert [p["username"] for p in listed["annotators"]] == ["anna", "bea"] and listed["rows"] == []
    state = rita.get(curation_url(article, a="anna", b="bea")).json()
    assert [(r["complex"], r["simple"], r["category"]) for r in state["rows"]] == [(0, 0, "agree"), (1, 1, "disagree")]
    assert rita.get(curation_url(article, a="anna", b="rita")).status_code == 400
    assert rita.get(curation_url(article, a="anna", b="anna")).status_code == 400

    response = rita.post(curation_url(article, a="anna", b="bea"),
                         {"decisions": [{"complex": 1, "simple": 1, "decision": "b"}], "note": "bea is right"}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["saved"] == {"decided": 1, "changed": 1}
    assert response.json()["rows"][1]["gold"]["label"] == "partial"
    gold = Adjudication.objects.get()
    assert (gold.value, gold.provenance, gold.reviewer, gold.note.endswith(". bea is right")) == \
        ("partial", "adjudicated", users["rita"], True)
    bad = rita.post(curation_url(article, a="anna", b="bea"), {"decisions": [{"complex": 0, "simple": 0, "decision": "?"}]},
                    format="json")
    assert bad.status_code == 400 and "decision must be one of" in bad.json()["detail"]


def test_the_curation_page_is_for_researchers(client, users, article):
    client.force_login(users["anna"])
    assert client.get(f"/articles/{article.pk}/curate/").status_code == 403
    client.force_login(users["olga"])
    assert client.get(f"/articles/{article.pk}/curate/").status_code == 404
    client.force_login(users["rita"])
    page = client.get(f"/articles/{article.pk}/curate/?a=anna&b=bea")
    assert page.status_code == 200 and b"js/curate.js" in page.content
    assert "Curate" in client.get(f"/articles/{article.pk}/").content.decode()
