"""The article API: whole-article alignment and paragraph correction; who may use them; errors."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, Job, Label, ParagraphAlignment, Status
from tests import factories
from tests.annotation.services.test_paragraph_correction import COMPLEX, SIMPLE


@pytest.fixture
def article(project):
    project.config = {"qc": {"min_seconds": 0, "test_every": 0}}
    project.save()
    return factories.make_article(project, "News", {"adv": COMPLEX, "int": SIMPLE})


@pytest.fixture
def run(article):
    run = AlignmentRun.objects.create(project=article.project, method="jaccard", status=Status.SUCCEEDED)
    c, s = article.documents.order_by("rank")
    factories.make_pair(run, article=article, complex_document=c, simple_document=s, complex_key="0",
                                 simple_key="0", predicted_label="aligned", origin="model")
    return run


def alignment(article, **query) -> str:
    params = "&".join(f"{k}={v}" for k, v in query.items())
    return f"/api/articles/{article.pk}/alignment/" + (f"?{params}" if params else "")


def paragraphs(article) -> str:
    return f"/api/articles/{article.pk}/paragraphs/"


@pytest.mark.parametrize("role,expected", [("anon", 401), ("olga", 404), ("ursula", 404), ("anna", 200), ("rita", 200), ("admin", 200)])
def test_only_members_of_the_project_can_read_the_alignment_and_paragraphs(api, users, article, run, role, expected):
    client = api(None if role == "anon" else users[role])
    assert client.get(alignment(article)).status_code == expected
    assert client.get(paragraphs(article)).status_code == expected


@pytest.mark.parametrize("role,expected", [("anon", 401), ("olga", 404), ("ursula", 404)])
def test_outsiders_cannot_save_anything(api, users, article, run, role, expected):
    client = api(None if role == "anon" else users[role])
    assert client.put(alignment(article), {"links": []}, format="json").status_code == expected
    assert client.put(paragraphs(article), {"links": []}, format="json").status_code == expected
    assert not Label.objects.exists() and not ParagraphAlignment.objects.exists()


def test_an_annotator_saves_links_and_gets_the_saved_alignment_back(api, users, article, run):
    response = api(users["anna"]).put(alignment(article), {"links": [{"complex": [2, 3], "simple": [2], "label": "partial"}],
                                                           "seconds": 25}, format="json")
    assert response.status_code == 200, response.json()
    data = response.json()
    assert data["saved"] == {"links": 1, "pairs_created": 1, "labels_written": 2, "not_aligned": 1}
    assert data["source"] == "own" and data["links"] == [{"complex": [2, 3], "simple": [2], "label": "partial"}]
    assert dict(Label.objects.filter(annotator=users["anna"]).values_list("pair__origin", "value")) == {
        "manual": "partial", "model": "not-aligned"}


def test_a_blind_annotator_gets_no_model_links_but_a_researcher_does(api, users, article, run):
    blind = api(users["anna"]).get(alignment(article)).json()
    assert blind["source"] == "empty" and blind["links"] == [] and blind["model_links"] == []
    seen = api(users["rita"]).get(alignment(article)).json()
    assert seen["source"] == "model" and seen["run"] == {"id": run.pk, "method": "jaccard"}
    assert seen["links"] == [{"complex": [0], "simple": [0], "label": "aligned"}]


def test_invalid_links_are_refused_with_clear_messages(api, users, article, run):
    response = api(users["anna"]).put(alignment(article), {"links": [{"complex": [0], "simple": [0]},
                                                                     {"complex": [0, 40], "simple": [1]}]}, format="json")
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert "links 1 and 2 overlap: both contain complex sentence 0 (a sentence can be in one link only; make one n:m link instead)" in errors
    assert "link 2: complex sentence 40 is out of range (the complex document has 7 sentences, 0–6)" in errors
    assert not Label.objects.exists()


@pytest.mark.parametrize("body,message", [({}, "send {\"links\""), ({"links": "all"}, "'links' must be a list"),
                                          ({"links": [], "seconds": -1}, "'seconds' must be a non-negative number")])
def test_a_malformed_body_is_refused(api, users, article, run, body, message):
    response = api(users["anna"]).put(alignment(article), body, format="json")
    assert response.status_code == 400 and message in response.json()["detail"]


def test_documents_and_runs_of_other_articles_or_projects_are_refused(api, users, project, article, run):
    other = factories.make_article(project, "Other", {"adv": [["x."]], "int": [["y."]]})
    client = api(users["rita"])
    response = client.get(alignment(article, complex=other.documents.first().pk))
    assert response.status_code == 400 and "is not a version of this article" in response.json()["detail"]
    foreign = AlignmentRun.objects.create(project=factories.make_project("Third"), method="jaccard")
    response = client.get(alignment(article, run=foreign.pk))
    assert response.status_code == 400 and f"run {foreign.pk} does not belong to this project" in response.json()["detail"]
    assert client.get(alignment(article, complex="x")).status_code == 400


def test_a_too_fast_save_says_how_long_to_spend(api, users, article, run):
    article.project.config = {"qc": {"min_seconds": 10}}
    article.project.save()
    response = api(users["anna"]).put(alignment(article), {"links": [], "seconds": 2}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "too_fast"
    assert "at least 10 seconds" in response.json()["detail"]


def test_an_annotator_corrects_paragraph_links_and_candidates_are_regenerated(api, users, article):
    client = api(users["anna"])
    state = client.get(paragraphs(article)).json()
    assert state["origin"] == "computed" and len(state["links"]) == 3
    response = client.put(paragraphs(article), {"links": [{"complex": 0, "simple": 0}, {"complex": 1, "simple": 2}]}, format="json")
    assert response.status_code == 200, response.json()
    data = response.json()
    assert (data["saved"]["added"], data["saved"]["removed"]) == (1, 2)
    assert data["saved"]["candidates"]["pairs"] == 4 + 4 and data["candidate_pairs"] == 8
    assert data["origin"] == "stored"


def test_bad_paragraph_links_are_refused(api, users, article):
    response = api(users["anna"]).put(paragraphs(article), {"links": [{"complex": 0, "simple": 9}]}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == ["link 1: simple paragraph 9 does not exist (the simple document has paragraphs 0–2)"]


@pytest.mark.parametrize("role,expected", [("anon", 401), ("olga", 404), ("anna", 403), ("rita", 202), ("admin", 202)])
def test_only_researchers_recompute_paragraphs_for_the_whole_project(api, users, project, article, role, expected,
                                                                      django_capture_on_commit_callbacks):
    client = api(None if role == "anon" else users[role])
    response = client.post(f"/api/projects/{project.pk}/paragraph-alignment/", {"candidates": False}, format="json")
    assert response.status_code == expected
    if expected == 202:
        job = Job.objects.get(pk=response.json()["id"])
        assert job.kind == "paragraph-alignment" and job.params == {"candidates": False}


@pytest.mark.parametrize("page", ["align", "paragraphs"])
def test_the_pages_render_for_members_and_are_hidden_from_outsiders(client, users, article, page):
    client.force_login(users["anna"])
    response = client.get(f"/articles/{article.pk}/{page}/")
    assert response.status_code == 200 and b"page-config" in response.content
    client.force_login(users["olga"])
    assert client.get(f"/articles/{article.pk}/{page}/").status_code == 404
