"""Accounts over HTTP: the token API (sign in, rotate, revoke, expiry, rate limit), the account page
and the rate-limited login page."""
from __future__ import annotations

import datetime

import pytest
from django.core.cache import caches
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import AuditEvent


@pytest.fixture(autouse=True)
def _empty_cache(db):
    _clear_caches()  # sign-in counters and throttle histories live in the process-wide cache
    yield
    _clear_caches()


def _with_token(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def _works(key: str) -> int:
    return _with_token(key).get("/api/projects/").status_code


# --- the token API --------------------------------------------------------------------------------

def test_signing_in_with_a_password_gives_a_token_that_works(users):
    response = APIClient().post("/api/token/", {"username": "anna", "password": "pw-anna"}, format="json")
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["expires_at"] and _works(data["token"]) == 200
    again = APIClient().post("/api/token/", {"username": "anna", "password": "pw-anna"}, format="json").json()
    assert again["token"] == data["token"]


@pytest.mark.parametrize("body", [{"username": "anna", "password": "nope"}, {"username": "nobody", "password": "x"}])
def test_a_wrong_password_gets_no_token(users, body):
    response = APIClient().post("/api/token/", body, format="json")
    assert response.status_code == 400 and "Unable to sign in" in response.json()["detail"]
    assert not Token.objects.exists()


def test_missing_credentials_are_named(users):
    response = APIClient().post("/api/token/", {"username": "anna"}, format="json")
    assert response.status_code == 400 and "password" in response.json()


def test_an_expired_token_is_refused_with_a_clear_message_and_signing_in_replaces_it(users, settings):
    settings.API_TOKEN_TTL_HOURS = 24
    token = Token.objects.create(user=users["anna"])
    Token.objects.filter(pk=token.pk).update(created=timezone.now() - datetime.timedelta(hours=25))
    response = _with_token(token.key).get("/api/projects/")
    assert response.status_code == 401
    assert "Token expired" in response.json()["detail"] and "POST /api/token/" in response.json()["detail"]
    # an expired token in the header does not stand in the way of getting a new one
    fresh = _with_token(token.key).post("/api/token/", {"username": "anna", "password": "pw-anna"}, format="json")
    assert fresh.status_code == 200 and fresh.json()["token"] != token.key
    assert _works(fresh.json()["token"]) == 200


def test_rotating_kills_the_old_key_at_once(users):
    old = Token.objects.create(user=users["anna"]).key
    response = _with_token(old).post("/api/token/rotate/")
    assert response.status_code == 201
    new = response.json()["token"]
    assert new != old and _works(old) == 401 and _works(new) == 200
    event = AuditEvent.objects.get(action="token.rotate")
    assert event.actor == users["anna"] and event.details["via"] == "api"


def test_revoking_over_the_api(users):
    key = Token.objects.create(user=users["anna"]).key
    assert _with_token(key).delete("/api/token/").status_code == 204
    assert _works(key) == 401
    assert AuditEvent.objects.filter(action="token.revoke", actor=users["anna"]).count() == 1
    assert APIClient().delete("/api/token/").status_code == 401
    assert APIClient().post("/api/token/rotate/").status_code == 401


def test_the_token_endpoints_are_rate_limited(users, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"token": "3/min"}}
    client = APIClient()
    codes = [client.post("/api/token/", {"username": "anna", "password": "pw-anna"}, format="json").status_code
             for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    rita = APIClient()
    rita.force_login(users["rita"])  # per user once signed in: anna's count is not rita's
    rotations = [rita.post("/api/token/rotate/") for _ in range(4)]
    assert [r.status_code for r in rotations[:3]] == [201, 201, 201]
    assert rotations[3].status_code == 429 and int(rotations[3]["Retry-After"]) > 0


def test_failed_sign_ins_on_the_api_lock_the_username_even_for_the_right_password(users, settings):
    settings.LOGIN_FAILURE_LIMIT = 3
    client = APIClient()
    for _ in range(3):
        assert client.post("/api/token/", {"username": "anna", "password": "bad"}, format="json").status_code == 400
    blocked = client.post("/api/token/", {"username": "anna", "password": "pw-anna"}, format="json")
    assert blocked.status_code == 429 and "Too many failed attempts" in blocked.json()["detail"]
    assert int(blocked["Retry-After"]) > 0
    assert client.post("/api/token/", {"username": "rita", "password": "pw-rita"}, format="json").status_code == 200


# --- the account page -----------------------------------------------------------------------------

def test_the_account_page_makes_a_token_and_shows_it_once(client, users):
    client.force_login(users["anna"])
    page = client.get("/account/").content.decode()
    assert "You have no API token." in page and 'id="nav-account"' in page
    response = client.post("/account/token/rotate/")
    key = Token.objects.get(user=users["anna"]).key
    assert response.status_code == 200 and key in response.content.decode()
    assert "no-store" in response["Cache-Control"]
    later = client.get("/account/").content.decode()
    assert key not in later and "You have a token" in later and "valid until" in later


def test_rotating_on_the_page_replaces_the_key(client, users):
    old = Token.objects.create(user=users["anna"]).key
    client.force_login(users["anna"])
    client.post("/account/token/rotate/")
    assert _works(old) == 401 and Token.objects.filter(user=users["anna"]).exists()


def test_revoking_on_the_page(client, users):
    key = Token.objects.create(user=users["anna"]).key
    client.force_login(users["anna"])
    response = client.post("/account/token/revoke/", follow=True)
    assert "API token revoked" in response.content.decode()
    assert _works(key) == 401
    assert client.get("/account/token/revoke/").status_code == 405


def test_a_password_change_on_the_page_revokes_the_token_and_keeps_this_session(client, users):
    key = Token.objects.create(user=users["anna"]).key
    client.force_login(users["anna"])
    new = "a much longer pass phrase"
    response = client.post("/account/password/", {"old_password": "pw-anna", "new_password1": new,
                                                  "new_password2": new}, follow=True)
    assert "Password changed" in response.content.decode()
    assert client.get("/account/").status_code == 200  # still signed in here
    assert _works(key) == 401
    assert APIClient().post("/api/token/", {"username": "anna", "password": new}, format="json").status_code == 200


def test_a_refused_password_change_says_why(client, users):
    client.force_login(users["anna"])
    response = client.post("/account/password/", {"old_password": "pw-anna", "new_password1": "123",
                                                  "new_password2": "123"})
    assert response.status_code == 400 and "too short" in response.content.decode()
    users["anna"].refresh_from_db()
    assert users["anna"].check_password("pw-anna")


def test_the_account_page_needs_a_sign_in(client, db):
    assert client.get("/account/")["Location"].startswith("/login/")


# --- the login page -------------------------------------------------------------------------------

def test_the_login_page_slows_a_username_down_after_too_many_failures(client, users, settings):
    settings.LOGIN_FAILURE_LIMIT = 3
    settings.LOGIN_DELAY_SECONDS = 900
    for _ in range(3):
        response = client.post("/login/", {"username": "anna", "password": "wrong"})
        assert response.status_code == 200 and "Wrong username or password" in response.content.decode()
    blocked = client.post("/login/", {"username": "anna", "password": "pw-anna"})
    assert blocked.status_code == 429
    assert "Too many failed attempts: try again in 15 minutes." in blocked.content.decode()
    assert "_auth_user_id" not in client.session
    # another account from the same address is not affected
    assert client.post("/login/", {"username": "rita", "password": "pw-rita"}).status_code == 302


def test_a_successful_login_resets_the_count(client, users, settings):
    settings.LOGIN_FAILURE_LIMIT = 3
    for _ in range(2):
        client.post("/login/", {"username": "anna", "password": "wrong"})
    assert client.post("/login/", {"username": "anna", "password": "pw-anna"}).status_code == 302
    client.logout()
    for _ in range(2):
        client.post("/login/", {"username": "anna", "password": "wrong"})
    assert client.post("/login/", {"username": "anna", "password": "pw-anna"}).status_code == 302


def _clear_caches() -> None:
    for each in caches.all():  # the sign-in counters ("limits": a table without Redis) and throttle histories
        each.clear()
