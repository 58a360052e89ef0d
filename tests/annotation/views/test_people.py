"""The people page (admins), invitations, deactivation, the user search API and creating projects."""
from __future__ import annotations

import re

from django.contrib.auth import get_user_model

from annotation.models import Membership, Project
from annotation.services.projects import people

User = get_user_model()


def test_only_admins_open_the_people_page(client, users):
    client.force_login(users["rita"])
    assert client.get("/people/").status_code == 403
    client.force_login(users["admin"])
    html = client.get("/people/").content.decode()
    assert 'data-username="anna"' in html and 'id="nav-people"' in html


def test_an_admin_creates_a_user(client, users):
    client.force_login(users["admin"])
    response = client.post("/people/create/", {"username": "bob", "password1": "a long pass phrase",
                                               "password2": "a long pass phrase", "researcher": "on"})
    assert response.status_code == 302
    assert User.objects.get(username="bob").groups.filter(name="researchers").exists()


def test_a_weak_password_is_refused_with_the_validators_messages_on_the_page(client, users):
    client.force_login(users["admin"])
    response = client.post("/people/create/", {"username": "bob", "password1": "12345", "password2": "12345"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "This password is too short." in html and "This password is entirely numeric." in html
    assert 'value="bob"' in html and not User.objects.filter(username="bob").exists()


def test_an_invitation_link_is_shown_to_the_admin_and_works_once(client, users):
    client.force_login(users["admin"])
    html = client.post("/people/invite/", {"username": "ines"}).content.decode()
    link = re.search(r'id="invitation-link" value="([^"]+)"', html).group(1)
    path = link.split("testserver", 1)[1]
    client.logout()
    assert "You were invited to alignapp as <b>ines</b>" in client.get(path).content.decode()
    refused = client.post(path, {"password1": "short", "password2": "short"})
    assert refused.status_code == 400 and "too short" in refused.content.decode()
    response = client.post(path, {"password1": "my own pass phrase", "password2": "my own pass phrase"})
    assert response.status_code == 302 and response.url == "/"
    assert client.get("/").context["user"].username == "ines"
    client.logout()
    again = client.get(path)
    assert again.status_code == 400 and "used already" in again.content.decode()


def test_a_deactivated_user_cannot_log_in_or_use_the_api(client, users, project, api):
    token_client = api(users["anna"])
    assert token_client.get("/api/projects/").status_code == 200
    client.force_login(users["admin"])
    assert client.post(f"/people/{users['anna'].pk}/active/", {"active": "0"}).status_code == 302
    users["anna"].refresh_from_db()
    assert not users["anna"].is_active
    client.logout()
    assert not client.login(username="anna", password="pw-anna")
    assert api(users["anna"]).get("/api/projects/").status_code in (401, 403)
    assert token_client.get("/api/projects/").status_code in (401, 403)


def test_a_deactivated_users_open_session_ends(client, users):
    client.force_login(users["anna"])
    people.set_active(users["anna"], False, by=users["admin"])
    assert client.get("/").status_code == 302  # to the login page


def test_researchers_search_users_by_prefix(api, users, project):
    data = api(users["rita"]).get("/api/users/?q=ur").json()
    assert data["results"] == [{"id": users["ursula"].pk, "username": "ursula"}]
    assert api(users["anna"]).get("/api/users/?q=ur").status_code == 403
    assert api().get("/api/users/?q=ur").status_code in (401, 403)


def test_a_researcher_creates_a_project_from_the_home_page(client, users):
    client.force_login(users["rita"])
    assert 'id="new-project-form"' in client.get("/").content.decode()
    response = client.post("/projects/new/", {"name": "Wiki FR", "language": "fr", "label_scheme": "wivico-validity",
                                              "encoder": "all-MiniLM-L6-v2", "guidelines": "# Ours"})
    project = Project.objects.get(name="Wiki FR")
    assert response.status_code == 302 and response.url == f"/projects/{project.pk}/"
    assert (project.language, project.label_scheme.slug) == ("fr", "wivico-validity")
    assert project.config["encoder"] == "all-MiniLM-L6-v2" and project.config["guidelines"].startswith("# Ours")
    assert Membership.objects.get(project=project).user == users["rita"]


def test_a_taken_project_name_is_refused_with_the_form_kept(client, users, project):
    client.force_login(users["admin"])
    response = client.post("/projects/new/", {"name": "newsela SAMPLE", "language": "en", "label_scheme": "aligned-partial-not"})
    assert response.status_code == 400
    assert "exists already" in response.content.decode()


def test_annotators_cannot_create_projects(client, users):
    client.force_login(users["anna"])
    assert 'id="new-project-form"' not in client.get("/").content.decode()
    assert client.post("/projects/new/", {"name": "X", "language": "en", "label_scheme": "aligned-partial-not"}).status_code == 403


def test_deactivated_users_cannot_be_added_to_a_project(client, users, project):
    people.set_active(users["ursula"], False, by=users["admin"])
    client.force_login(users["rita"])
    response = client.post(f"/projects/{project.pk}/settings/members/", {"username": "ursula", "role": "annotator"}, follow=True)
    assert "deactivated" in response.content.decode()
    assert not Membership.objects.filter(project=project, user=users["ursula"]).exists()
