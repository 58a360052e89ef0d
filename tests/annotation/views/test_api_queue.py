"""The queue API: next, submit (+ next in one round trip), skip, undo, context; roles; blindness."""
from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import Assignment, Label
from annotation.services.review import qc
from tests.annotation.services.review.test_queue import build_queue, set_qc


@pytest.fixture
def work(project):
    set_qc(project)
    pairs, _ = build_queue(project, 3)
    return pairs


def url(project, action: str) -> str:
    return f"/api/projects/{project.pk}/queue/{action}/"


@pytest.mark.parametrize("role,expected", [("anon", 401), ("olga", 404), ("ursula", 404), ("anna", 200),
                                           ("rita", 200), ("admin", 200)])
def test_only_members_of_the_project_get_items(api, users, project, work, role, expected):
    client = api(None if role == "anon" else users[role])
    assert client.get(url(project, "next")).status_code == expected


@pytest.mark.parametrize("action,body", [("submit", {"pair": 1, "value": "aligned"}), ("skip", {"pair": 1}), ("undo", {})])
def test_outsiders_cannot_post_to_the_queue(api, users, project, work, action, body):
    assert api(users["olga"]).post(url(project, action), body, format="json").status_code == 404
    assert api(None).post(url(project, action), body, format="json").status_code == 401


def test_next_returns_the_item_with_both_sides_the_scheme_and_progress(api, users, project, work):
    data = api(users["anna"]).get(url(project, "next")).json()
    item = data["item"]
    assert item["pair"] == work[0].pk
    assert item["complex"]["sentences"] == [{"index": 0, "paragraph": 0, "text": work[0].members.get(side="complex").sentence.text}]
    assert item["simple"]["groups"] == [[0]] and item["complex"]["level"] == "adv"
    assert [v["key"] for v in data["scheme"]["values"]] == ["1", "2", "3"]
    assert data["progress"] == {"done": 0, "remaining": 3, "total": 3}
    assert data["done"] is False and "context" not in item


def test_the_item_is_blind_to_model_output_and_other_annotators(api, users, project, work):
    Label.objects.create(pair=work[0], annotator=users["rita"], value="not-aligned", comment="rita-was-here")
    response = api(users["anna"]).get(url(project, "next"))
    body = response.content.decode()
    assert "rita" not in body and "score" not in body and "prediction" not in body and "predicted" not in body
    assert set(response.json()["item"]) == {"pair", "article", "complex", "simple", "shape", "diff"}  # diff: text only


def test_context_comes_on_demand(api, users, project, work):
    client = api(users["anna"])
    item = client.get(url(project, "next") + "?context=1").json()["item"]
    assert [s["index"] for s in item["context"]["complex"]] == [0, 1, 2]
    again = client.get(f"/api/projects/{project.pk}/queue/context/{item['pair']}/").json()
    assert again["context"] == item["context"]
    assert client.get(f"/api/projects/{project.pk}/queue/context/{work[2].pk}/").status_code == 404


def test_submit_stores_the_label_and_returns_the_next_item(api, users, project, work):
    client = api(users["anna"])
    client.get(url(project, "next"))
    response = client.post(url(project, "submit"), {"pair": work[0].pk, "value": "partial", "seconds": 4.5,
                                                    "comment": "tense changed"}, format="json")
    assert response.status_code == 201
    data = response.json()
    assert data["label"]["value"] == "partial" and data["created"] is True
    assert data["item"]["pair"] == work[1].pk
    assert data["progress"]["done"] == 1
    label = Label.objects.get()
    assert (label.annotator, label.seconds, label.comment) == (users["anna"], 4.5, "tense changed")


def test_the_same_submission_twice_stores_one_label(api, users, project, work):
    client = api(users["anna"])
    client.get(url(project, "next"))
    body = {"pair": work[0].pk, "value": "aligned", "client_token": str(uuid.uuid4())}
    first = client.post(url(project, "submit"), body, format="json")
    second = client.post(url(project, "submit"), body, format="json")
    assert (first.status_code, second.status_code) == (201, 200)
    assert second.json()["item"]["pair"] == work[1].pk
    assert Label.objects.count() == 1


def test_a_too_fast_label_is_refused_with_the_reason(api, users, project, work):
    set_qc(project, min_seconds=10)
    client = api(users["anna"])
    client.get(url(project, "next"))
    response = client.post(url(project, "submit"), {"pair": work[0].pk, "value": "aligned", "seconds": 2}, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "too_fast" and "at least 10 seconds" in response.json()["detail"]


def test_an_unknown_label_value_is_refused(api, users, project, work):
    client = api(users["anna"])
    client.get(url(project, "next"))
    response = client.post(url(project, "submit"), {"pair": work[0].pk, "value": "maybe"}, format="json")
    assert response.status_code == 400 and "choose one of: aligned, partial, not-aligned" in response.json()["detail"]


def test_a_pair_that_was_not_served_cannot_be_submitted(api, users, project, work):
    response = api(users["anna"]).post(url(project, "submit"), {"pair": work[2].pk, "value": "aligned"}, format="json")
    assert response.status_code == 400 and "not in your queue" in response.json()["detail"]


def test_skip_moves_on_and_the_pair_comes_back_last(api, users, project, work):
    client = api(users["anna"])
    client.get(url(project, "next"))
    data = client.post(url(project, "skip"), {"pair": work[0].pk}, format="json").json()
    assert data["skipped"] == work[0].pk and data["item"]["pair"] == work[1].pk
    for pair in work[1:]:
        data = client.post(url(project, "submit"), {"pair": pair.pk, "value": "aligned"}, format="json").json()
    assert data["item"]["pair"] == work[0].pk


def test_undo_returns_the_last_labelled_item_again(api, users, project, work):
    client = api(users["anna"])
    client.get(url(project, "next"))
    client.post(url(project, "submit"), {"pair": work[0].pk, "value": "aligned"}, format="json")
    data = client.post(url(project, "undo"), {}, format="json").json()
    assert data["undone"] == work[0].pk and data["item"]["pair"] == work[0].pk
    assert not Label.objects.exists()
    assert Assignment.objects.get(pair=work[0], annotator=users["anna"]).status == Assignment.OPEN
    nothing = api(users["rita"]).post(url(project, "undo"), {}, format="json")
    assert nothing.status_code == 400 and "nothing to undo" in nothing.json()["detail"]
    assert nothing.json()["code"] == "nothing_to_undo"


@pytest.mark.parametrize("config,words", [({"queue_order": "newest"}, "queue_order must be one of"),
                                          ({"queue_run": "last"}, "queue_run must be a run id")])
def test_a_bad_stored_queue_config_is_a_400_with_its_own_code(api, users, project, work, config, words):
    """A value stored before its key was checked: StoredConfigError (code bad_project_config), not a plain
    ValueError the view had to declare a refusal (issue 38)."""
    project.config = {**project.config, **config}
    project.save()
    response = api(users["anna"]).get(url(project, "next"))
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "bad_project_config" and words in response.json()["detail"]


def test_an_empty_queue_says_all_done(api, users, project, work):
    client = api(users["anna"])
    data = client.get(url(project, "next")).json()
    for _ in work:
        data = client.post(url(project, "submit"), {"pair": data["item"]["pair"], "value": "aligned"}, format="json").json()
    assert data["item"] is None and data["done"] is True and "All done" in data["message"]
    assert data["progress"] == {"done": 3, "remaining": 0, "total": 3}


def test_an_excluded_annotator_is_told_why(api, users, project, work):
    qc.exclude(users["anna"], project, "Your accuracy on test questions is 40%.")
    response = api(users["anna"]).get(url(project, "next"))
    assert response.status_code == 403
    assert response.json() == {"detail": "Your accuracy on test questions is 40%.", "code": "excluded", "excluded": True}


def test_likert_ratings_are_submitted_per_dimension(api, users):
    from tests import factories

    project = factories.make_project("Likert", scheme="likert-human-eval", anna="annotator")
    set_qc(project)
    work, _ = build_queue(project, 1)
    client = api(users["anna"])
    assert client.get(url(project, "next")).json()["scheme"]["dimensions"] == ["simplicity", "adequacy", "fluency"]
    missing = client.post(url(project, "submit"), {"pair": work[0].pk, "ratings": {"simplicity": 4}}, format="json")
    assert missing.status_code == 400 and "ratings: missing adequacy, fluency" in missing.json()["detail"]
    ok = client.post(url(project, "submit"), {"pair": work[0].pk, "ratings": {"simplicity": 4, "adequacy": 5, "fluency": 3}},
                     format="json")
    assert ok.status_code == 201
    assert Label.objects.get().ratings == {"simplicity": "4", "adequacy": "5", "fluency": "3"}


def test_the_labelling_page_renders_for_members_only(client, users, project, work):
    client.force_login(users["anna"])
    page = client.get(f"/projects/{project.pk}/annotate/")
    assert page.status_code == 200 and b"annotate-config" in page.content and b"<kbd>u</kbd> undo" in page.content
    assert b"Start labelling" in client.get(f"/projects/{project.pk}/").content
    client.force_login(users["olga"])
    assert client.get(f"/projects/{project.pk}/annotate/").status_code == 404


@pytest.mark.parametrize("test_every", [0, 2])
def test_submit_and_next_stays_within_a_query_budget(api, users, project, django_assert_max_num_queries, test_every):
    """The labelling loop's round trip (``bench/annotation_latency.py``): token, project and
    membership, the annotator's counts with the submitted assignment, label + assignment + the next
    pair in one transaction, the pair's sentences. Test questions (``test_every``) take the general
    way, which costs a few more. (Inside the test's transaction, atomic blocks are savepoints.)"""
    set_qc(project, test_every=test_every, min_test_answers=1000)
    build_queue(project, 12, gold=6)
    client = api(users["anna"])
    item = client.get(url(project, "next")).json()["item"]
    # with test questions, scoring the answers reads the pairs' values by the precedence rule, over the gold
    # reading of their articles (issue 34: stored gold, counted votes, completions' implied nots and imported
    # gold, a fixed handful of queries per article chunk). Issue 37: 12 → 9 and 21 → 19 (the savepoints of
    # the test's transaction included), then 9 → 7 on PostgreSQL (the token with the seat, the label with its
    # assignment: ``test_one_submit_and_next_takes_five_statements_through_the_api``)
    # (SQLite, which runs this module too: 12 as before, its savepoints and a JSON feature probe counted)
    budget = (7 if connection.vendor == "postgresql" else 12) if test_every == 0 else 19
    for _ in range(6):
        with django_assert_max_num_queries(budget):
            response = client.post(url(project, "submit"), {"pair": item["pair"], "value": "aligned",
                                                            "client_token": str(uuid.uuid4())}, format="json")
        assert response.status_code == 201
        item = response.json()["item"]


def test_one_submit_and_next_takes_five_statements_through_the_api(api, users, project):
    """Issue 37, the labelling loop at a million pairs: every statement waits for a core on a loaded machine,
    so submit→next was cut from 10 statements (12 with BEGIN/COMMIT) to 7, then to 5 on PostgreSQL: the
    token with the project, the membership and the annotator's counts with their assignment of the pair
    (one query; on SQLite the token is a query of its own); the label and its assignment marked done, which
    also tells whether the pair has automatic gold to refresh (one statement; two on SQLite); the next pair
    locked; its assignment (a conditional INSERT that re-counts its places); the item with its sentences.
    (In the test's transaction BEGIN/COMMIT are savepoints, left out here as in ``test_label_queries``.)"""
    set_qc(project)
    build_queue(project, 8)
    client = api(users["anna"])
    item = client.get(url(project, "next")).json()["item"]
    for n in range(4):
        with CaptureQueriesContext(connection) as queries:
            response = client.post(url(project, "submit"), {"pair": item["pair"], "value": "aligned",
                                                            "client_token": str(uuid.uuid4())}, format="json")
        assert response.status_code == 201
        statements = [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]
        if n:  # the first may refill the progress cache (the queue's size and its taken places)
            assert len(statements) <= (5 if connection.vendor == "postgresql" else 7), "\n".join(statements)
        served = response.json()["item"]
        assert served["pair"] == item["pair"] + 1 and served["complex"]["sentences"] and served["article"]["title"]
        assert Assignment.objects.get(annotator=users["anna"], pair_id=item["pair"]).status == Assignment.DONE
        item = served
    assert Label.objects.filter(annotator=users["anna"]).count() == 4
    assert Assignment.objects.filter(annotator=users["anna"], status=Assignment.OPEN).count() == 1


def test_a_submit_whose_body_does_not_parse_is_refused_with_its_reason_and_stores_nothing(api, users, project, work):
    """The submit reads the pair from the body with the seat (issue 37), so a body that does not parse is
    refused before the seat: the same 400 inside and outside the project (it says nothing about it)."""
    for user in ("olga", "anna"):
        response = api(users[user]).post(url(project, "submit"), "{not json", content_type="application/json")
        assert response.status_code == 400 and "JSON parse error" in response.json()["detail"]
    assert not Label.objects.exists()
    assert api(users["olga"]).post(url(project, "submit"), {"pair": work[0].pk, "value": "aligned"},
                                   format="json").status_code == 404


def test_the_server_clock_of_a_submit_is_read_with_the_seat(api, users, project, work):
    """The assignment's serving time now comes through JSON with the seat's query: the label's server time
    is still the time since it was served."""
    client = api(users["anna"])
    item = client.get(url(project, "next")).json()["item"]
    Assignment.objects.filter(pair_id=item["pair"]).update(assigned_at=timezone.now() - timedelta(seconds=42))
    set_qc(project, min_seconds=40)
    ok = client.post(url(project, "submit"), {"pair": item["pair"], "value": "aligned", "seconds": 41}, format="json")
    assert ok.status_code == 201
    assert 42 <= Label.objects.get(pair_id=item["pair"]).server_seconds < 60


# --- The token read with the seat (issue 37; PostgreSQL: one statement, SQLite: the token's own) ------------

def test_the_queue_refuses_an_unknown_token_an_inactive_user_and_an_expired_token(api, users, project, work, settings):
    """The queue's token authentication (the token with the seat on PostgreSQL) refuses what every API view
    refuses, with the same answers; a deleted token is refused at once (nothing is kept between requests)."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    for path in ("next", "submit"):
        stranger = APIClient()
        stranger.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
        answer = stranger.post(url(project, path), {"pair": work[0].pk, "value": "aligned"}, format="json") \
            if path == "submit" else stranger.get(url(project, path))
        assert answer.status_code == 401 and answer.json()["detail"] == "Invalid token."
    client = api(users["anna"])
    assert client.get(url(project, "next")).status_code == 200
    users["anna"].is_active = False
    users["anna"].save(update_fields=["is_active"])  # (its signal also revokes the token: set it back)
    token = Token.objects.get_or_create(user=users["anna"])[0]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    answer = client.get(url(project, "next"))
    assert answer.status_code == 401 and answer.json()["detail"] == "User inactive or deleted."
    users["anna"].is_active = True
    users["anna"].save(update_fields=["is_active"])
    token = Token.objects.get_or_create(user=users["anna"])[0]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert client.get(url(project, "next")).status_code == 200
    Token.objects.filter(pk=token.pk).update(created=timezone.now() - timedelta(hours=settings.API_TOKEN_TTL_HOURS + 1))
    answer = client.get(url(project, "next"))
    assert answer.status_code == 401 and answer.json()["detail"].startswith("Token expired")
    Token.objects.filter(pk=token.pk).delete()
    assert client.get(url(project, "next")).json()["detail"] == "Invalid token."


def test_the_token_read_with_the_seat_still_answers_404_outside_the_project_and_for_no_project(api, users, project,
                                                                                                 work):
    assert api(users["olga"]).get(url(project, "next")).status_code == 404
    assert api(users["anna"]).get("/api/projects/987654/queue/next/").status_code == 404
    submit = api(users["olga"]).post(url(project, "submit"), {"pair": work[0].pk, "value": "aligned"}, format="json")
    assert submit.status_code == 404 and not Label.objects.exists()


def test_a_bad_token_with_a_body_that_does_not_parse_is_refused_as_a_bad_token(project):
    from rest_framework.test import APIClient

    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    answer = stranger.post(url(project, "submit"), "{not json", content_type="application/json")
    assert answer.status_code == 401


def test_the_token_and_the_seat_are_one_statement_on_postgresql(api, users, project, work):
    client = api(users["anna"])
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url(project, "next")).status_code == 200
    tokens = [q["sql"] for q in queries.captured_queries if "authtoken_token" in q["sql"]]
    assert len(tokens) == 1
    assert ("annotation_project" in tokens[0]) is (connection.vendor == "postgresql")


def test_the_queue_routes_are_tried_before_every_other_route():
    """Issue 37: the labelling loop's requests are the most frequent, and Django tries the routes in order: behind
    every other area and the REST router, resolving a submit cost about 0.5 ms of CPU."""
    from django.urls import resolve, reverse

    from annotation import urls
    from annotation.urls import queue as queue_urls

    assert urls.urlpatterns[0].urlconf_name is queue_urls
    match = resolve(reverse("queue-submit", kwargs={"project_pk": 7}))
    assert match.url_name == "queue-submit" and match.kwargs == {"project_pk": 7}
    assert reverse("queue-context", kwargs={"project_pk": 7, "pair_pk": 9}) == "/api/projects/7/queue/context/9/"
