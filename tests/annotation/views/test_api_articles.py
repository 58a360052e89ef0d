"""The article API: whole-article alignment (links, removed model links, completion) and paragraph
correction; who may use them; errors."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, ArticleCompletion, Job, Label, ParagraphAlignment, Status
from tests import factories
from tests.annotation.services.editing.test_paragraph_correction import COMPLEX, SIMPLE


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
    assert data["saved"] == {"links": 2, "pairs_created": 2, "labels_written": 2, "not_aligned": 0,
                             "version": data["version"]}
    assert data["source"] == "own" and data["links"] == [{"complex": [2], "simple": [2], "label": "partial"},
                                                         {"complex": [3], "simple": [2], "label": "partial"}]
    assert data["groups"] == [{"complex": [2, 3], "simple": [2], "kind": "fusion", "label": "partial",
                               "links": data["links"]}]
    assert response["ETag"] == f'"{data["version"]}"'
    assert data["completion"] is None and data["completions"] == []
    assert list(Label.objects.filter(annotator=users["anna"]).values_list("pair__origin", "value", "seconds", "source")) == [
        ("manual", "partial", 12.5, "article"), ("manual", "partial", 12.5, "article")]


def test_a_researcher_removes_the_models_link_and_only_that_pair_is_labelled_not_aligned(api, users, article, run):
    client = api(users["rita"])
    shown = client.get(alignment(article, run=run.pk)).json()
    assert shown["source"] == "model" and shown["model_links"] == [{"complex": [0], "simple": [0], "label": "aligned"}]
    response = client.put(alignment(article, run=run.pk), {"links": [{"complex": [1], "simple": [1]}],
                                                           "removed": shown["model_links"], "seconds": 8}, format="json")
    assert response.status_code == 200, response.json()
    saved = response.json()["saved"]
    assert (saved["links"], saved["pairs_created"], saved["labels_written"], saved["not_aligned"]) == (1, 1, 2, 1)
    assert dict(Label.objects.filter(annotator=users["rita"]).values_list("pair__origin", "value")) == {
        "manual": "aligned", "model": "not-aligned"}
    again = client.put(alignment(article, run=run.pk), {"links": [{"complex": [1], "simple": [1]}], "removed": [], "seconds": 3},
                       format="json")
    assert again.json()["saved"]["labels_written"] == 0


def test_a_stale_tab_gets_409_with_what_changed_and_nothing_is_overwritten(api, users, article, run):
    client = api(users["anna"])
    tab_a, tab_b = client.get(alignment(article)).json(), client.get(alignment(article)).json()
    first = client.put(alignment(article), {"links": [{"complex": 0, "simple": 0, "label": "partial"}],
                                           "version": tab_a["version"], "base": tab_a["links"]}, format="json")
    assert first.status_code == 200, first.json()
    stale = client.put(alignment(article), {"links": [{"complex": 1, "simple": 1}], "version": tab_b["version"],
                                           "base": tab_b["links"]}, format="json")
    assert stale.status_code == 409
    body = stale.json()
    assert body["code"] == "conflict" and body["changes"]["added"] == [{"complex": [0], "simple": [0], "label": "partial"}]
    assert body["links"] == [{"complex": [0], "simple": [0], "label": "partial"}] and body["version"] == first.json()["version"]
    assert dict(Label.objects.values_list("pair__complex_key", "value")) == {"0": "partial"}
    # If-Match works like the body's version; the current version goes through (merge: both links)
    merged = client.put(alignment(article), {"links": [{"complex": 0, "simple": 0, "label": "partial"},
                                                       {"complex": 1, "simple": 1}]},
                        format="json", HTTP_IF_MATCH=stale["ETag"])
    assert merged.status_code == 200 and len(merged.json()["links"]) == 2
    again = client.put(alignment(article), {"links": []}, format="json", HTTP_IF_MATCH=stale["ETag"])
    assert again.status_code == 409


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
    assert "link 2: complex sentence 40 is out of range (the complex document has 7 sentences, 0–6)" in errors
    assert not Label.objects.exists()


@pytest.mark.parametrize("body,message", [({}, "send {\"links\""), ({"links": "all"}, "'links' must be a list"),
                                          ({"links": [], "seconds": -1}, "'seconds' must be a non-negative number"),
                                          ({"links": [], "removed": "all"}, "'removed' must be a list"),
                                          ({"links": [], "removed": [{"complex": [0]}]}, "removed link 1: 'simple' must be")])
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


def test_the_per_item_minimum_time_does_not_refuse_an_article_save(api, users, article, run):
    article.project.config = {"qc": {"min_seconds": 10}}
    article.project.save()
    response = api(users["anna"]).put(alignment(article), {"links": [{"complex": [0], "simple": [0]}], "seconds": 2},
                                      format="json")
    assert response.status_code == 200, response.json()
    assert Label.objects.get().seconds == 2


def completion(article, **query) -> str:
    params = "&".join(f"{k}={v}" for k, v in query.items())
    return f"/api/articles/{article.pk}/alignment/completion/" + (f"?{params}" if params else "")


def test_an_annotator_marks_the_document_pair_complete_and_reopens_it(api, users, article, run):
    client = api(users["anna"])
    c, s = article.documents.order_by("rank")
    response = client.post(completion(article, complex=c.pk, simple=s.pk), {"seconds": 120, "empty": True}, format="json")
    assert response.status_code == 201, response.json()
    data = response.json()
    assert data["created"] and data["completion"]["annotator"] == "anna" and data["completion"]["seconds"] == 120
    stored = ArticleCompletion.objects.get()
    assert (stored.annotator, stored.complex_document, stored.simple_document, stored.article) == (users["anna"], c, s, article)
    assert data["completion"]["completed_at"] == stored.completed_at.isoformat()
    assert client.post(completion(article), {"seconds": 5}, format="json").status_code == 200  # already complete
    assert client.get(alignment(article)).json()["completion"]["annotator"] == "anna"
    reopened = client.delete(completion(article))
    assert reopened.status_code == 200 and reopened.json() == {"reopened": True, "completion": None, "completions": []}
    assert not ArticleCompletion.objects.exists() and client.delete(completion(article)).json()["reopened"] is False


def test_completing_a_pair_without_links_needs_the_empty_flag_else_409(api, users, article):
    """Issue 27 item 7: the API marked an empty document pair complete (every pair "not aligned") at once."""
    client = api(users["anna"])
    refused = client.post(completion(article), {"seconds": 3}, format="json")
    assert refused.status_code == 409, refused.json()
    assert refused.json()["code"] == "empty" and refused.json()["not_aligned"] > 0 and not ArticleCompletion.objects.exists()
    assert client.post(completion(article), {"seconds": 3, "empty": "yes"}, format="json").status_code == 409
    assert client.post(completion(article), {"seconds": 3, "empty": True}, format="json").status_code == 201


@pytest.mark.parametrize("role,expected", [("anon", 401), ("olga", 404), ("ursula", 404)])
def test_outsiders_cannot_complete_or_reopen(api, users, article, role, expected):
    client = api(None if role == "anon" else users[role])
    assert client.post(completion(article), {}, format="json").status_code == expected
    assert client.delete(completion(article)).status_code == expected
    assert not ArticleCompletion.objects.exists()


def test_a_bad_completion_request_is_refused(api, users, article):
    client = api(users["anna"])
    response = client.post(completion(article), {"seconds": "long"}, format="json")
    assert response.status_code == 400 and "'seconds' must be a non-negative number" in response.json()["detail"]
    other = factories.make_article(article.project, "Other", {"adv": [["x."]], "int": [["y."]]})
    response = client.post(completion(article, complex=other.documents.first().pk), {}, format="json")
    assert response.status_code == 400 and "is not a version of this article" in response.json()["detail"]
    assert not ArticleCompletion.objects.exists()


def test_an_annotator_corrects_paragraph_links_and_candidates_are_regenerated(api, users, article):
    article.project.config = {**article.project.config, "paragraph_corrections": "direct"}  # else: a proposal
    article.project.save()
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


def test_a_bad_stored_config_is_a_400_with_its_own_code_and_the_key_named(api, users, article):
    """A value stored in the config before its key was checked: the services refuse with StoredConfigError (code
    bad_project_config), no longer a plain ValueError the view had to declare (issue 38)."""
    project = article.project
    project.config = {**project.config, "paragraph_corrections": "sometimes"}
    project.save()
    response = api(users["anna"]).put(paragraphs(article), {"links": [{"complex": 0, "simple": 0}]}, format="json")
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "bad_project_config" and "paragraph_corrections 'sometimes'" in body["detail"]
    assert body["errors"] == [body["detail"]]
    project.config = {"paragraph_alignment": {"similarity": "bleu"}}
    project.save()
    read = api(users["anna"]).get(paragraphs(article))
    assert read.status_code == 400 and read.json()["code"] == "bad_project_config", read.content
    assert "paragraph_alignment: similarity: unknown similarity 'bleu'" in read.json()["detail"]
