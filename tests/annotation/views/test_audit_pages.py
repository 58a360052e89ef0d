"""The audit log: the project page and API (researchers and admins), the site-wide page (admins);
filters, pagination, and actions done through pages and the API showing up with their actor."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import AlignmentRun, AuditEvent, Membership, Project, Status


def page_url(project) -> str:
    return f"/projects/{project.pk}/audit/"


def api_url(project) -> str:
    return f"/api/projects/{project.pk}/audit/"


@pytest.fixture
def logged(project, users):
    """Events in the project (oldest first: rita started run #1, admin cancelled it, a command added
    olga) and one in the other project."""
    now = timezone.now()
    rows = [("run.start", users["rita"], project, "run #1", {"method": "tfidf"}),
            ("run.cancel", users["admin"], project, "run #1", {}),
            ("member.add", None, project, "olga", {"role": "annotator", "via": "command"}),
            ("run.start", users["ursula"], Project.objects.get(name="Other"), "run #2", {"method": "sbert"})]
    AuditEvent.objects.bulk_create([
        AuditEvent(action=a, actor=u, project=p, target=t, details=d, created_at=now - timedelta(minutes=10 - i))
        for i, (a, u, p, t, d) in enumerate(rows)])
    return project


def targets(response) -> list[str]:
    return [row["target"] for row in response.json()["results"]]


# --- who may read it ---------------------------------------------------------------------------

@pytest.mark.parametrize("who, expected", [("rita", 200), ("admin", 200), ("anna", 403), ("olga", 404), ("ursula", 404)])
def test_the_project_page_is_for_its_researchers_and_admins(client, users, logged, who, expected):
    client.force_login(users[who])
    assert client.get(page_url(logged)).status_code == expected


@pytest.mark.parametrize("who, expected", [(None, 401), ("rita", 200), ("admin", 200), ("anna", 403), ("olga", 404)])
def test_the_project_api_is_for_its_researchers_and_admins(api, users, logged, who, expected):
    assert api(users[who] if who else None).get(api_url(logged)).status_code == expected


def test_anonymous_visitors_are_sent_to_log_in(client, logged):
    for url in (page_url(logged), "/audit/"):
        response = client.get(url)
        assert response.status_code == 302 and response.url.startswith("/login/")


@pytest.mark.parametrize("who, expected", [("admin", 200), ("rita", 403), ("anna", 403)])
def test_the_site_wide_log_is_for_admins_only(client, users, logged, who, expected):
    client.force_login(users[who])
    assert client.get("/audit/").status_code == expected


# --- what it shows -----------------------------------------------------------------------------

def test_the_project_page_lists_its_events_newest_first_in_words(client, users, logged):
    client.force_login(users["rita"])
    html = client.get(page_url(logged)).content.decode()
    assert html.index("added a member") < html.index("cancelled a run") < html.index("started an alignment run")
    assert "method: tfidf" in html and "role: annotator · via: command" in html
    assert "run #2" not in html  # the other project's event


def test_the_site_wide_log_has_every_project(client, users, logged):
    client.force_login(users["admin"])
    html = client.get("/audit/").content.decode()
    assert "run #1" in html and "run #2" in html and ">Other</a>" in html


def test_an_empty_log_says_so(client, users, project):
    client.force_login(users["rita"])
    assert "No events yet." in client.get(page_url(project)).content.decode()


def test_the_api_gives_the_events_newest_first_with_the_action_in_words(api, users, logged):
    data = api(users["rita"]).get(api_url(logged)).json()
    assert data["count"] == 3
    first = data["results"][0]
    assert (first["action"], first["action_text"], first["actor"], first["target"]) == (
        "member.add", "added a member", None, "olga")
    assert data["results"][2]["actor"] == "rita" and data["results"][2]["details"] == {"method": "tfidf"}


# --- filters and pages -------------------------------------------------------------------------

def test_filters_by_action_group_and_user(api, client, users, logged):
    rita = api(users["rita"])
    assert targets(rita.get(api_url(logged), {"action": "run.cancel"})) == ["run #1"]
    assert [r["action"] for r in rita.get(api_url(logged), {"action": "run"}).json()["results"]] == [
        "run.cancel", "run.start"]
    assert [r["action"] for r in rita.get(api_url(logged), {"user": "rita"}).json()["results"]] == ["run.start"]
    assert targets(rita.get(api_url(logged), {"user": "-"})) == ["olga"]
    client.force_login(users["rita"])
    html = client.get(page_url(logged), {"action": "member.add"}).content.decode()
    assert "olga" in html and "run #1" not in html
    assert "No events match these filters." in client.get(page_url(logged), {"user": "nobody"}).content.decode()


def test_an_unknown_action_filter_is_a_400_naming_the_valid_ones(api, client, users, logged):
    response = api(users["rita"]).get(api_url(logged), {"action": "runs"})
    assert response.status_code == 400 and "unknown action 'runs'" in response.json()["action"]
    client.force_login(users["rita"])
    response = client.get(page_url(logged), {"action": "runs"})
    assert response.status_code == 400 and "unknown action &#x27;runs&#x27;" in response.content.decode()
    response = api(users["rita"]).get(api_url(logged), {"user": "a\x00b"})
    assert response.status_code == 400 and "NUL" in response.json()["user"]  # the request guard (annotation.middleware)
    response = api(users["rita"]).get(api_url(logged), {"user": "x" * 151})
    assert response.status_code == 400 and "user must be a username" in response.json()["user"]


def test_pages_of_fifty_newest_first_keep_the_filters(api, client, users, project):
    now = timezone.now()
    AuditEvent.objects.bulk_create([AuditEvent(action="run.start", actor=users["rita"], project=project,
                                               target=f"run #{i}", created_at=now - timedelta(seconds=i))
                                    for i in range(120)])
    client.force_login(users["rita"])
    first = client.get(page_url(project), {"action": "run.start"})
    rows = first.content.decode().count('<tr data-action="run.start">')
    assert rows == 50 and "Page 1 of 3 · 120 events" in first.content.decode()
    assert 'href="?action=run.start&amp;page=2"' in first.content.decode()
    last = client.get(page_url(project), {"action": "run.start", "page": 3}).content.decode()
    assert last.count('<tr data-action="run.start">') == 20 and "run #119" in last and "run #99<" not in last
    data = api(users["rita"]).get(api_url(project), {"page": 2}).json()
    assert data["count"] == 120 and len(data["results"]) == 50 and data["results"][0]["target"] == "run #50"
    assert "page=3" in data["next"]


# --- actions through pages and the API are logged with their actor --------------------------

def test_a_role_change_on_the_settings_page_is_logged_as_the_researchers(client, users, project):
    client.force_login(users["rita"])
    anna = Membership.objects.get(project=project, user=users["anna"])
    client.post(f"/projects/{project.pk}/settings/members/{anna.pk}/role/", {"role": "researcher"})
    event = AuditEvent.objects.get()
    assert (event.action, event.actor, event.project, event.target) == ("member.role", users["rita"], project, "anna")
    assert "changed a member&#x27;s role" in client.get(page_url(project)).content.decode()


def test_cancelling_a_run_through_the_api_is_logged_as_the_caller(api, users, project):
    run = AlignmentRun.objects.create(project=project, method="tfidf", status=Status.RUNNING)
    assert api(users["rita"]).post(f"/api/runs/{run.pk}/cancel/").status_code == 200
    event = AuditEvent.objects.get()
    assert (event.action, event.actor, event.target) == ("run.cancel", users["rita"], f"run #{run.pk}")


def test_the_membership_api_goes_through_the_service(api, users, project):
    client = api(users["rita"])
    response = client.post(f"/api/projects/{project.pk}/members/", {"username": "olga", "role": "annotator"}, format="json")
    assert response.status_code == 201 and response.json()["username"] == "olga"
    olga = Membership.objects.get(project=project, user=users["olga"])
    assert client.delete(f"/api/projects/{project.pk}/members/{olga.pk}/").status_code == 204
    rita = Membership.objects.get(project=project, user=users["rita"])
    response = client.delete(f"/api/projects/{project.pk}/members/{rita.pk}/")
    assert response.status_code == 400 and "last researcher" in response.json()["detail"]
    assert sorted(AuditEvent.objects.values_list("action", "actor__username", "target")) == [
        ("member.add", "rita", "olga"), ("member.remove", "rita", "olga")]


def test_a_project_created_or_changed_through_the_api_is_logged(api, users):
    client = api(users["rita"])
    response = client.post("/api/projects/", {"name": "Wiki", "language": "en", "label_scheme": "aligned-partial-not"},
                           format="json")
    assert response.status_code == 201
    pk = response.json()["id"]
    assert client.patch(f"/api/projects/{pk}/", {"description": "Wikipedia"}, format="json").status_code == 200
    assert sorted(AuditEvent.objects.values_list("action", "actor__username", "project_id")) == [
        ("project.create", "rita", pk), ("project.settings", "rita", pk)]
    assert AuditEvent.objects.get(action="project.settings").details == {"changed": ["description"]}


def test_the_project_page_links_the_log_for_researchers_only(client, users, project):
    client.force_login(users["rita"])
    assert f'href="/projects/{project.pk}/audit/"' in client.get(f"/projects/{project.pk}/").content.decode()
    client.force_login(users["anna"])
    assert "/audit/" not in client.get(f"/projects/{project.pk}/").content.decode()
