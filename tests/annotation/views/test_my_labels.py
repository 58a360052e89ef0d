""""My labels": the page, and the label API it uses — one's own labels filtered and searched,
edited through the gate (history kept), and the history listed."""
from __future__ import annotations

import datetime
import uuid

import pytest
from django.utils import timezone
from rest_framework.test import APIRequestFactory, force_authenticate

from annotation.models import Label, LabelChange
from annotation.views.api_labels import LabelViewSet
from tests import factories, labels
from tests.annotation.services.review.test_queue import build_queue, set_qc

LIST = "/api/labels/"


@pytest.fixture
def labelled(users, project):
    """anna labelled three pairs of "Queue article" and two of "River story" (values in that order);
    rita labelled the first pair too. Returns anna's labels, oldest first."""
    set_qc(project)
    first, _ = build_queue(project, 3)
    second, _ = build_queue(project, 2, title="River story")
    values = ["aligned", "partial", "not-aligned", "aligned", "partial"]
    given = []
    for pair, value in zip(first + second, values, strict=True):
        assert labels.next_item(users["anna"], project) == pair
        label, _ = labels.submit(users["anna"], project, pair.pk, value=value, seconds=2.0)
        given.append(label)
    Label.objects.create(pair=first[0], annotator=users["rita"], value="not-aligned", comment="rita's")
    Label.objects.filter(pk=given[2].pk).update(comment="Tense changed")
    latest = timezone.now() - datetime.timedelta(minutes=5)
    for n, label in enumerate(given):  # one a day (UTC), the newest five minutes ago
        Label.objects.filter(pk=label.pk).update(updated_at=latest - datetime.timedelta(days=len(given) - 1 - n))
        label.refresh_from_db()
    return given


def mine(client, project, **params):
    response = client.get(LIST, {"mine": "1", "project": project.pk, **params})
    assert response.status_code == 200, response.content
    return response.json()


def ids(data) -> list[int]:
    return [row["id"] for row in data["results"]]


def test_it_lists_only_ones_own_labels_newest_first_with_both_sides_text(api, users, project, labelled):
    data = mine(api(users["anna"]), project)
    assert data["count"] == 5
    assert ids(data) == [label.pk for label in reversed(labelled)]
    first = data["results"][-1]
    assert first["annotator"] == "anna" and first["value"] == "aligned"
    assert first["article_title"] == "Queue article"
    assert first["complex_text"] == "The alpha report number 0 was published yesterday by the agency."
    assert first["simple_text"] == "The agency published report 0 about alpha."
    rita = mine(api(users["rita"]), project)
    assert [row["comment"] for row in rita["results"]] == ["rita's"], "a researcher's own labels only"


def test_it_filters_by_label_value_and_article(api, users, project, labelled):
    client = api(users["anna"])
    assert ids(mine(client, project, value="partial")) == [labelled[4].pk, labelled[1].pk]
    river = labelled[3].pair.article_id
    assert ids(mine(client, project, article=river)) == [labelled[4].pk, labelled[3].pk]
    assert ids(mine(client, project, article=river, value="aligned")) == [labelled[3].pk]
    assert mine(client, project, value="no-such-label")["count"] == 0


def test_it_filters_by_dates_the_end_date_included(api, users, project, labelled):
    client = api(users["anna"])
    two_days_ago = labelled[2].updated_at.date().isoformat()
    assert ids(mine(client, project, since=two_days_ago)) == [label.pk for label in reversed(labelled[2:])]
    assert ids(mine(client, project, until=two_days_ago)) == [labelled[2].pk, labelled[1].pk, labelled[0].pk]
    assert ids(mine(client, project, since=two_days_ago, until=two_days_ago)) == [labelled[2].pk]
    just_before = labelled[4].updated_at - datetime.timedelta(minutes=1)
    assert ids(mine(client, project, since=just_before.isoformat())) == [labelled[4].pk], "a date-time too"


def test_a_date_that_is_not_one_is_refused(api, users, project, labelled):
    response = api(users["anna"]).get(LIST, {"mine": "1", "since": "yesterday"})
    assert response.status_code == 400
    assert "since" in response.json()


def test_the_search_looks_in_both_sides_the_comment_and_the_title(api, users, project, labelled):
    client = api(users["anna"])
    assert ids(mine(client, project, q="report number 2 ")) == [labelled[2].pk]
    assert ids(mine(client, project, q="ABOUT GAMMA")) == [labelled[2].pk], "case-insensitive, simple side"
    assert ids(mine(client, project, q="tense")) == [labelled[2].pk], "the comment"
    assert ids(mine(client, project, q="river")) == [labelled[4].pk, labelled[3].pk], "the article title"
    assert ids(mine(client, project, q="river", value="partial")) == [labelled[4].pk]
    assert mine(client, project, q="rita")["count"] == 0, "never another annotator's comment"
    assert mine(client, project, q="%")["count"] == 0, "no wildcards"


def test_a_lone_surrogate_in_the_search_is_refused(users, project, labelled):
    # A browser cannot send one (it is not valid UTF-8); a client with its own decoding could.
    request = APIRequestFactory().get(LIST, {"mine": "1"})
    request.GET = request.GET.copy()
    request.GET["q"] = "report \ud800"
    force_authenticate(request, users["anna"])
    response = LabelViewSet.as_view({"get": "list"})(request)
    assert response.status_code == 400
    assert "lone surrogate" in str(response.data["q"])


def test_a_search_that_is_too_long_is_refused(api, users, project, labelled):
    assert api(users["anna"]).get(LIST, {"mine": "1", "q": "x" * 201}).status_code == 400


def test_editing_a_label_changes_it_and_keeps_old_to_new_in_its_history(api, users, project, labelled):
    client = api(users["anna"])
    label = labelled[0]
    response = client.patch(f"{LIST}{label.pk}/", {"value": "partial", "comment": "second look"}, format="json")
    assert response.status_code == 200, response.content
    data = response.json()
    assert (data["value"], data["comment"]) == ("partial", "second look")
    assert data["complex_text"].startswith("The alpha report")
    label.refresh_from_db()
    assert (label.value, label.comment) == ("partial", "second look")
    change = LabelChange.objects.get()
    assert (change.old_value, change.new_value, change.source) == ("aligned", "partial", "my-labels")
    assert change.changed_by == users["anna"]

    history = client.get(f"{LIST}{label.pk}/history/").json()
    assert len(history) == 1
    assert {k: history[0][k] for k in ("old_value", "new_value", "old_comment", "new_comment", "source", "changed_by")} \
        == {"old_value": "aligned", "new_value": "partial", "old_comment": "", "new_comment": "second look",
            "source": "my-labels", "changed_by": "anna"}
    assert mine(client, project)["results"][0]["id"] == label.pk, "an edited label is the newest"


def test_saving_the_same_value_again_changes_nothing(api, users, project, labelled):
    client = api(users["anna"])
    label = labelled[1]
    response = client.patch(f"{LIST}{label.pk}/", {"value": "partial"}, format="json")
    assert response.status_code == 200
    assert LabelChange.objects.count() == 0
    assert client.get(f"{LIST}{label.pk}/history/").json() == []


def test_a_likert_label_is_edited_by_its_ratings(api, users):
    project = factories.make_project("Human evaluation", scheme="likert-human-eval", anna="annotator")
    set_qc(project)
    build_queue(project, 1)
    pair = labels.next_item(users["anna"], project)
    ratings = {"simplicity": "4", "adequacy": "3", "fluency": "5"}
    label, _ = labels.submit(users["anna"], project, pair.pk, ratings=ratings)
    client = api(users["anna"])
    response = client.patch(f"{LIST}{label.pk}/", {"ratings": {**ratings, "adequacy": 2}}, format="json")
    assert response.status_code == 200, response.content
    assert Label.objects.get().ratings == {**ratings, "adequacy": "2"}
    [entry] = client.get(f"{LIST}{label.pk}/history/").json()
    assert (entry["old_ratings"], entry["new_ratings"]) == (ratings, {**ratings, "adequacy": "2"})
    bad = client.patch(f"{LIST}{label.pk}/", {"ratings": {**ratings, "adequacy": 6}}, format="json")
    assert bad.status_code == 400 and bad.json()["code"] == "invalid"
    assert Label.objects.get().ratings == {**ratings, "adequacy": "2"}


@pytest.mark.parametrize("who,expected", [("rita", 403), ("olga", 404), ("ursula", 404)])
def test_nobody_edits_another_annotators_label(api, users, project, labelled, who, expected):
    label = labelled[0]
    response = api(users[who]).patch(f"{LIST}{label.pk}/", {"value": "partial"}, format="json")
    assert response.status_code == expected
    assert Label.objects.get(pk=label.pk).value == "aligned"
    assert LabelChange.objects.count() == 0


def test_an_annotator_cannot_edit_or_read_the_history_of_a_researchers_label(api, users, project, labelled):
    ritas = Label.objects.get(annotator=users["rita"])
    client = api(users["anna"])
    assert client.patch(f"{LIST}{ritas.pk}/", {"value": "aligned"}, format="json").status_code == 404
    assert client.get(f"{LIST}{ritas.pk}/history/").status_code == 404
    assert Label.objects.get(pk=ritas.pk).value == "not-aligned"


@pytest.mark.parametrize("body,field", [
    ({"value": "maybe"}, "value"),
    ({"value": ""}, "value"),
    ({"value": "aligned", "ratings": {"simplicity": 3}}, "ratings"),
    ({"value": "aligned", "comment": "a\x00b"}, "comment"),
    ({"value": "aligned", "comment": "x" * 5001}, "comment"),
])
def test_bad_input_is_refused_and_nothing_is_stored(api, users, project, labelled, body, field):
    label = labelled[1]
    response = api(users["anna"]).patch(f"{LIST}{label.pk}/", body, format="json")
    assert response.status_code == 400
    assert field in str(response.json())
    label.refresh_from_db()
    assert (label.value, label.comment) == ("partial", "")
    assert LabelChange.objects.count() == 0


def test_a_lone_surrogate_in_the_comment_is_refused(api, users, project, labelled):
    label = labelled[1]
    body = '{"value": "aligned", "comment": "fine \\ud800"}'  # JSON may escape one; UTF-8 cannot hold it
    response = api(users["anna"]).patch(f"{LIST}{label.pk}/", body, content_type="application/json")
    assert response.status_code == 400
    assert "urrogate" in str(response.json()["comment"])
    assert Label.objects.get(pk=label.pk).value == "partial"
    assert LabelChange.objects.count() == 0


def test_a_conflicting_queue_submission_answers_409_with_what_the_dialog_shows(api, users, project, labelled):
    client = api(users["anna"])
    label = labelled[0]
    body = {"pair": label.pair_id, "value": "not-aligned", "seconds": 3, "client_token": str(uuid.uuid4())}
    conflict = client.post(f"/api/projects/{project.pk}/queue/submit/", body, format="json")
    assert conflict.status_code == 409
    data = conflict.json()
    assert data["code"] == "conflict" and data["pair"] == label.pair_id
    assert set(data["stored"]) == {"id", "value", "ratings", "comment", "updated_at", "created_at"}
    assert data["stored"]["value"] == "aligned"
    assert conflict["Cache-Control"] == "no-store"
    assert Label.objects.get(pk=label.pk).value == "aligned"

    changed = client.post(f"/api/projects/{project.pk}/queue/submit/", {**body, "change": True}, format="json")
    assert changed.status_code == 200 and changed.json()["label"]["value"] == "not-aligned"
    [entry] = client.get(f"{LIST}{label.pk}/history/").json()
    assert (entry["old_value"], entry["new_value"], entry["source"]) == ("aligned", "not-aligned", "queue")


# --- The page ------------------------------------------------------------------------------------

@pytest.fixture
def browser(client):
    def login(user):
        client.force_login(user)
        return client
    return login


def test_the_page_is_for_the_projects_members(browser, users, project, labelled):
    url = f"/projects/{project.pk}/my-labels/"
    response = browser(users["anna"]).get(url)
    assert response.status_code == 200
    html = response.content.decode()
    assert "js/my_labels.js" in html and 'id="filters"' in html
    assert ">Queue article</option>" in html and ">River story</option>" in html
    assert ">Partially aligned</option>" in html
    assert "no-store" in response["Cache-Control"]
    assert browser(users["olga"]).get(url).status_code == 404


def test_an_anonymous_visitor_is_sent_to_log_in(client, project):
    response = client.get(f"/projects/{project.pk}/my-labels/")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_the_project_and_labelling_pages_link_to_my_labels(browser, users, project):
    client = browser(users["anna"])
    url = f"/projects/{project.pk}/my-labels/"
    assert url in client.get(f"/projects/{project.pk}/").content.decode()
    labelling = client.get(f"/projects/{project.pk}/annotate/")
    assert url in labelling.content.decode() and 'id="conflict"' in labelling.content.decode()
    assert "no-store" in labelling["Cache-Control"]
