"""Sessions follow the account (issue 19 item 8): deactivating a user ends their sessions and API token for
good, whichever way it is done, and so does removing the user from the site."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.services.projects import people

User = get_user_model()


def signed_in(user) -> Client:
    client = Client()
    assert client.post("/login/", {"username": user.username, "password": f"pw-{user.username}"}).status_code == 302
    assert client.get("/account/").status_code == 200
    return client


def sessions_of(user) -> int:
    return sum(str(s.get_decoded().get("_auth_user_id")) == str(user.pk) for s in Session.objects.all())


def test_a_session_is_dead_after_deactivate_and_reactivate(users):
    anna = users["anna"]
    client = signed_in(anna)
    other = signed_in(users["rita"])
    people.set_active(anna, False, by=users["admin"])
    assert sessions_of(anna) == 0
    people.set_active(User.objects.get(pk=anna.pk), True, by=users["admin"])
    response = client.get("/account/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert other.get("/account/").status_code == 200, "other users stay signed in"
    assert signed_in(User.objects.get(pk=anna.pk)).get("/account/").status_code == 200, "a new sign-in works"


def test_the_people_page_deactivation_ends_the_session(users):
    anna = users["anna"]
    client = signed_in(anna)
    admin = Client()
    admin.force_login(users["admin"])
    assert admin.post(f"/people/{anna.pk}/active/", {"active": "0"}).status_code == 302
    assert not User.objects.get(pk=anna.pk).is_active
    assert admin.post(f"/people/{anna.pk}/active/", {"active": "1"}).status_code == 302
    assert User.objects.get(pk=anna.pk).is_active
    assert client.get("/account/").status_code == 302


def test_a_deactivation_saved_anywhere_else_ends_sessions_and_token(users):
    anna = users["anna"]
    client = signed_in(anna)
    key = Token.objects.create(user=anna).key
    anna.is_active = False
    anna.save()  # e.g. the Django admin's user form
    anna.is_active = True
    anna.save()
    assert client.get("/account/").status_code == 302
    assert not Token.objects.filter(key=key).exists()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/projects/").status_code == 401


def test_removing_a_user_from_the_site_ends_their_sessions(users):
    anna = users["anna"]
    signed_in(anna)
    assert sessions_of(anna) == 1
    pk = anna.pk
    anna.delete()
    anna.pk = pk
    assert sessions_of(anna) == 0
