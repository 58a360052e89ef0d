"""One's own account (services.projects.accounts): API tokens rotated, revoked and expiring; a new
password revokes the token; failed sign-ins are limited per address and username."""
from __future__ import annotations

import datetime

import pytest
from django.core.cache import caches
from django.utils import timezone
from rest_framework.authtoken.models import Token

from annotation.models import AuditEvent
from annotation.services.projects import accounts


@pytest.fixture(autouse=True)
def _empty_cache(db):
    _clear_caches()  # the sign-in counters live in the (process-wide) cache
    yield
    _clear_caches()


def _age(token: Token, hours: float) -> None:
    Token.objects.filter(pk=token.pk).update(created=timezone.now() - datetime.timedelta(hours=hours))


def test_rotating_makes_a_new_key_and_the_old_one_is_gone(users):
    old = Token.objects.create(user=users["anna"])
    new = accounts.rotate_token(users["anna"], actor=users["anna"])
    assert new.key != old.key
    assert list(Token.objects.filter(user=users["anna"]).values_list("key", flat=True)) == [new.key]
    event = AuditEvent.objects.get(action="token.rotate")
    assert event.actor == users["anna"] and event.target == "anna"


def test_revoking_deletes_the_token_and_is_recorded_once(users):
    Token.objects.create(user=users["anna"])
    assert accounts.revoke_tokens(users["anna"], actor=users["anna"]) is True
    assert not Token.objects.filter(user=users["anna"]).exists()
    assert accounts.revoke_tokens(users["anna"], actor=users["anna"]) is False  # nothing left: nothing recorded
    assert AuditEvent.objects.filter(action="token.revoke").count() == 1


def test_a_token_expires_after_the_configured_hours(users, settings):
    settings.API_TOKEN_TTL_HOURS = 24
    token = Token.objects.create(user=users["anna"])
    assert not accounts.is_expired(token)
    assert accounts.expires_at(token) == token.created + datetime.timedelta(hours=24)
    _age(token, 25)
    token.refresh_from_db()
    assert accounts.is_expired(token) and accounts.token_state(users["anna"]).expired
    settings.API_TOKEN_TTL_HOURS = 0  # never
    assert not accounts.is_expired(token) and accounts.expires_at(token) is None


def test_signing_in_reuses_a_valid_token_and_replaces_an_expired_one(users, settings):
    settings.API_TOKEN_TTL_HOURS = 1
    first = accounts.issue_token(users["anna"])
    assert accounts.issue_token(users["anna"]).key == first.key
    assert not AuditEvent.objects.exists()
    _age(first, 2)
    second = accounts.issue_token(users["anna"])
    assert second.key != first.key and not accounts.is_expired(second)
    assert AuditEvent.objects.get(action="token.rotate").details["reason"] == "expired"


def test_changing_ones_password_revokes_the_token(users):
    Token.objects.create(user=users["anna"])
    accounts.change_password(users["anna"], old="pw-anna", new="a much longer pass phrase", repeat="a much longer pass phrase")
    users["anna"].refresh_from_db()
    assert users["anna"].check_password("a much longer pass phrase")
    assert not Token.objects.filter(user=users["anna"]).exists()
    assert AuditEvent.objects.get(action="token.revoke").details["reason"] == "password changed"


@pytest.mark.parametrize("old,new,repeat,message", [
    ("wrong", "a much longer pass phrase", "a much longer pass phrase", "current password is not right"),
    ("pw-anna", "a much longer pass phrase", "a different pass phrase", "differ"),
    ("pw-anna", "123", "123", "too short"),
    ("pw-anna", "", "", "Enter a new password"),
])
def test_a_refused_password_change_changes_nothing(users, old, new, repeat, message):
    token = Token.objects.create(user=users["anna"])
    with pytest.raises(accounts.AccountError, match=message):
        accounts.change_password(users["anna"], old=old, new=new, repeat=repeat)
    users["anna"].refresh_from_db()
    assert users["anna"].check_password("pw-anna")
    assert Token.objects.filter(key=token.key).exists()


def test_a_password_set_anywhere_else_revokes_the_token_too(users):
    """The admin's password form, a script: anything that sets a password and saves the user."""
    Token.objects.create(user=users["anna"])
    users["anna"].set_password("set by an admin")
    users["anna"].save()
    assert not Token.objects.filter(user=users["anna"]).exists()


def test_saving_a_user_without_a_new_password_keeps_the_token(users, settings):
    token = Token.objects.create(user=users["anna"])
    users["anna"].first_name = "Anna"
    users["anna"].save()
    # Django re-hashes a password with the preferred hasher at sign-in: not a password change
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher",
                                 "django.contrib.auth.hashers.MD5PasswordHasher"]
    before = users["anna"].password
    assert users["anna"].check_password("pw-anna")
    users["anna"].refresh_from_db()
    assert users["anna"].password != before and users["anna"].password.startswith("pbkdf2_")
    assert Token.objects.filter(key=token.key).exists()


def _attempt(address: str, username: str) -> int:
    """One failed sign-in attempt; the wait it got (0: it was let through and failed)."""
    wait = accounts.begin_sign_in(address, username)
    if not wait:
        accounts.login_failed(address, username)
    return wait


def test_failed_sign_ins_slow_that_username_down_from_every_address(settings, db):
    settings.LOGIN_FAILURE_LIMIT = 3
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 50
    settings.LOGIN_DELAY_SECONDS = 900
    for _ in range(2):
        assert _attempt("10.0.0.1", "anna") == 0
        assert accounts.login_blocked_for("10.0.0.1", "anna") == 0
    assert _attempt("10.0.0.1", "Anna ") == 0  # the same username, however typed
    wait = accounts.login_blocked_for("10.0.0.1", "anna")
    assert 14 * 60 < wait <= 15 * 60
    assert accounts.blocked_message(wait) == "Too many failed attempts: try again in 15 minutes."
    assert accounts.blocked_message(10) == "Too many failed attempts: try again in 10 seconds."
    assert accounts.begin_sign_in("10.0.0.2", "anna") > 0, "the username's counter holds from another address"
    assert accounts.begin_sign_in("10.0.0.1", "rita") == 0


def test_a_successful_sign_in_clears_the_count(settings, db):
    settings.LOGIN_FAILURE_LIMIT = 3
    for _ in range(2):
        _attempt("10.0.0.1", "anna")
    assert accounts.begin_sign_in("10.0.0.1", "anna") == 0
    accounts.login_succeeded("10.0.0.1", "anna")
    for _ in range(3):
        assert _attempt("10.0.0.1", "anna") == 0


def _clear_caches() -> None:
    for each in caches.all():  # the sign-in counters ("limits": a table without Redis) and throttle histories
        each.clear()
