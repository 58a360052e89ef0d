"""Every API endpoint × every role, in one table.

Roles: anon (no credentials), olga (annotator of another project), ursula (researcher of another
project), anna (annotator of the project), rita (researcher of the project), admin (site staff).
"""
from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from annotation.models import AlignmentRun, Assignment, CandidatePair, Label, Status, indices_key
from annotation.services.alignment.run_saving import link_sentences
from tests import factories

ROLES = ("anon", "olga", "ursula", "anna", "rita", "admin")


@pytest.fixture
def world(project, users):
    article = factories.make_article(project, "Bees", {
        "adv": [["Bee populations have declined sharply.", "Pesticides are blamed."]],
        "ele": [["There are fewer bees."]],
    })
    complex_doc, simple_doc = article.documents.order_by("rank")
    failed = AlignmentRun.objects.create(project=project, method="jaccard", status=Status.FAILED, error="boom")
    pair = factories.make_pair(failed, article=article, complex_document=complex_doc,
                                        simple_document=simple_doc, complex_key=indices_key([0]),
                                        simple_key=indices_key([0]), score=0.8, predicted_label="aligned")
    link_sentences([pair])
    served = timezone.now() - datetime.timedelta(seconds=60)  # on screen long enough for QC's minimum time
    for name in ("anna", "rita", "admin"):
        Assignment.objects.create(pair=pair, annotator=users[name], assigned_at=served)
    return {"p": project.pk, "a": article.pk, "d": complex_doc.pk, "run": failed.pk, "pair": pair.pk,
            "member": project.memberships.get(user__username="anna").pk}


def _upload():
    from django.core.files.uploadedfile import SimpleUploadedFile

    return {"files": [SimpleUploadedFile("Fox-adv.txt", b"The quick brown fox jumps over the lazy dog. It runs."),
                      SimpleUploadedFile("Fox-ele.txt", b"A fox jumps over a dog.")], "format": "levels"}


# (method, url template, body factory, {role: expected status}); "*" = every role not listed.
TABLE = [
    ("get", "/api/projects/", None, {"anon": 401, "*": 200}),
    ("post", "/api/projects/", lambda: {"name": "New", "language": "en", "label_scheme": "wivico-validity"},
     {"anon": 401, "olga": 403, "anna": 403, "ursula": 201, "rita": 201, "admin": 201}),
    ("get", "/api/projects/{p}/", None, {"anon": 401, "olga": 404, "ursula": 404, "*": 200}),
    ("patch", "/api/projects/{p}/", lambda: {"description": "x"}, {"anon": 401, "olga": 404, "ursula": 404, "anna": 403, "*": 200}),
    ("post", "/api/projects/{p}/stats/", None, {"anon": 401, "olga": 404, "ursula": 404, "anna": 403, "*": 202}),
    ("get", "/api/projects/{p}/members/", None, {"anon": 401, "olga": 404, "ursula": 404, "anna": 403, "*": 200}),
    ("post", "/api/projects/{p}/members/", lambda: {"username": "olga", "role": "annotator"},
     {"anon": 401, "olga": 404, "ursula": 404, "anna": 403, "*": 201}),
    ("delete", "/api/projects/{p}/members/{member}/", None, {"anon": 401, "olga": 404, "ursula": 404, "anna": 403, "*": 204}),
    ("post", "/api/projects/{p}/import/", _upload, {"anon": 401, "olga": 404, "ursula": 404, "anna": 403, "*": 201}),
    ("get", "/api/label-schemes/", None, {"anon": 401, "*": 200}),
    ("post", "/api/label-schemes/", lambda: {"slug": "yes-no", "name": "Yes/no", "kind": "categorical",
                                             "values": [{"value": "yes", "name": "Yes", "key": "1"}]},
     {"anon": 401, "admin": 201, "*": 403}),
    ("get", "/api/articles/", None, {"anon": 401, "*": 200}),
    ("get", "/api/articles/{a}/", None, {"anon": 401, "olga": 404, "ursula": 404, "*": 200}),
    ("get", "/api/documents/{d}/", None, {"anon": 401, "olga": 404, "ursula": 404, "*": 200}),
    ("get", "/api/runs/", None, {"anon": 401, "*": 200}),
    # anna annotates blind (the project does not show predictions): no runs for her
    ("get", "/api/runs/{run}/", None, {"anon": 401, "olga": 404, "ursula": 404, "anna": 403, "*": 200}),
    ("post", "/api/runs/", lambda: {"project": "{p}", "method": "jaccard"},
     {"anon": 401, "olga": 404, "ursula": 404, "anna": 403, "*": 201}),
    ("post", "/api/runs/{run}/retry/", None, {"anon": 401, "olga": 404, "ursula": 404, "anna": 403, "*": 202}),
    ("get", "/api/jobs/", None, {"anon": 401, "*": 200}),
    ("get", "/api/pairs/", None, {"anon": 401, "*": 200}),
    ("get", "/api/pairs/{pair}/", None, {"anon": 401, "olga": 404, "ursula": 404, "*": 200}),
    ("post", "/api/labels/", lambda: {"pair": "{pair}", "value": "aligned", "seconds": 12},
     {"anon": 401, "olga": 404, "ursula": 404, "*": 201}),
    ("get", "/api/labels/", None, {"anon": 401, "*": 200}),
]


def _fill(value, ids):
    if isinstance(value, str):
        return value.format(**ids)
    if isinstance(value, dict):
        return {k: _fill(v, ids) for k, v in value.items()}
    return value


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("method,url,body,expected", TABLE, ids=[f"{m} {u}" for m, u, _, _ in TABLE])
def test_each_endpoint_allows_exactly_the_right_roles(api, users, world, role, method, url, body, expected):
    client = api(None if role == "anon" else users[role])
    data = _fill(body(), world) if body else None
    fmt = "multipart" if url.endswith("/import/") else "json"
    response = getattr(client, method)(url.format(**world), data, format=fmt)
    want = expected.get(role, expected.get("*"))
    assert response.status_code == want, response.content[:500]


def test_annotators_only_list_their_own_projects(api, users, world):
    names = [p["name"] for p in api(users["olga"]).get("/api/projects/").json()["results"]]
    assert names == ["Other"]
    assert api(users["olga"]).get("/api/articles/").json()["results"] == []
    assert api(users["olga"]).get("/api/pairs/").json()["results"] == []


def test_annotation_is_blind_to_model_predictions_unless_the_project_allows_it(api, users, world, project):
    anna_view = api(users["anna"]).get(f"/api/pairs/{world['pair']}/").json()
    assert anna_view["score"] is None and anna_view["predicted_label"] == ""
    assert anna_view["complex_text"] == "Bee populations have declined sharply."
    assert api(users["rita"]).get(f"/api/pairs/{world['pair']}/").json()["score"] == 0.8
    project.config = {"show_predictions": True}
    project.save()
    assert api(users["anna"]).get(f"/api/pairs/{world['pair']}/").json()["predicted_label"] == "aligned"


def test_annotators_never_see_other_annotators_labels(api, users, world):
    pair = CandidatePair.objects.get(pk=world["pair"])
    Label.objects.create(pair=pair, annotator=users["rita"], value="partial")
    Label.objects.create(pair=pair, annotator=users["anna"], value="aligned")
    anna_labels = api(users["anna"]).get("/api/labels/").json()["results"]
    assert [lab["annotator"] for lab in anna_labels] == ["anna"]
    rita_labels = api(users["rita"]).get("/api/labels/").json()["results"]
    assert sorted(lab["annotator"] for lab in rita_labels) == ["anna", "rita"]
