"""A label's input and its annotator, once for every path (issue 29, item 2): the text limits are
the label scheme's (no view declares its own), and the queue API, ``/api/labels/`` and the labelling
page apply the same exclusion, from the same annotator context."""
from __future__ import annotations

import pytest

from annotation.label_schemes import scheme_kind
from annotation.models import Assignment, Label, Membership
from annotation.services.review import qc
from tests import labels
from tests.annotation.services.review.test_queue import build_queue, set_qc
from tests.annotation.views.test_api_queue import url


@pytest.fixture
def served(users, project):
    """The first pair of anna's queue, served to her."""
    set_qc(project)
    build_queue(project, 3)
    return labels.next_item(users["anna"], project)


def _post(api, users, project, path: str, pair, **fields):
    target = url(project, "submit") if path == "queue" else "/api/labels/"
    return api(users["anna"]).post(target, {"pair": pair.pk, "value": "aligned", **fields}, format="json")


@pytest.mark.parametrize("path", ["queue", "labels"])
def test_the_comment_limit_is_the_schemes_on_both_apis(api, users, project, served, path, monkeypatch):
    monkeypatch.setattr(type(scheme_kind(project.label_scheme)), "comment_chars", 10)
    response = _post(api, users, project, path, served, comment="x" * 11)
    assert response.status_code == 400 and response.json()["detail"] == "comment: at most 10 characters (got 11)"
    assert not Label.objects.exists()
    assert _post(api, users, project, path, served, comment="x" * 10).status_code == 201


@pytest.mark.parametrize("path", ["queue", "labels"])
def test_a_value_past_the_schemes_limit_is_refused_by_the_label_input(api, users, project, served, path):
    response = _post(api, users, project, path, served, value="x" * 51)
    assert response.status_code == 400 and response.json() == {"detail": "value: at most 50 characters (got 51)",
                                                               "code": "invalid"}


def test_every_path_refuses_an_excluded_annotator_with_the_same_answer(api, users, project, client, served):
    label, _ = labels.submit(users["anna"], project, served.pk, value="aligned")
    labels.next_item(users["anna"], project)  # the next pair is served (then taken back by the exclusion)
    qc.exclude(users["anna"], project, "Removed for the test.")
    answer = {"detail": "Removed for the test.", "code": "excluded", "excluded": True}
    anna = api(users["anna"])
    pair = served.pk + 1
    for response in (anna.get(url(project, "next")), anna.post(url(project, "undo"), {}, format="json"),
                     anna.post(url(project, "submit"), {"pair": pair, "value": "aligned"}, format="json"),
                     anna.post("/api/labels/", {"pair": pair, "value": "aligned"}, format="json"),
                     anna.patch(f"/api/labels/{label.pk}/", {"value": "partial"}, format="json")):
        assert (response.status_code, response.json()) == (403, answer)
    client.force_login(users["anna"])
    assert "Removed for the test." in client.get(f"/projects/{project.pk}/annotate/").content.decode()
    assert Label.objects.get().value == "aligned"


def test_a_test_answer_that_excludes_the_annotator_answers_with_the_reason(api, users, project):
    set_qc(project, test_every=1, min_test_answers=1, exclusion_threshold=0.9)
    build_queue(project, 2, gold=2)
    anna = api(users["anna"])
    item = anna.get(url(project, "next")).json()["item"]
    assert Assignment.objects.get(pair_id=item["pair"], annotator=users["anna"]).is_test
    response = anna.post(url(project, "submit"), {"pair": item["pair"], "value": "not-aligned"}, format="json")
    reason = Membership.objects.get(project=project, user=users["anna"]).exclusion_reason
    assert reason.startswith("Your accuracy on test questions is 0% (0 of 1)")
    assert (response.status_code, response.json()) == (403, {"detail": reason, "code": "excluded", "excluded": True})
