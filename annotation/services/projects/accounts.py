"""One's own account: API tokens (issue, rotate, revoke, expiry), password change, and the limit
on failed sign-ins.

* **Tokens** are DRF's (one per user, the key is the credential). They expire
  ``settings.API_TOKEN_TTL_HOURS`` after they were made (0 = never): the API then answers 401 and
  signing in again (``POST /api/token/`` with username and password, or the account page) makes a
  new one. Rotating makes a new key at once (the old one stops working); revoking deletes it.
  Every password change revokes the user's token, whoever changed it and wherever (the account
  page, the admin, a script): :func:`revoke_on_password_change` listens to the user model's saves.
* **Failed sign-ins** (the login page and ``POST /api/token/``) are counted per client address and
  username in Django's cache: after ``LOGIN_FAILURE_LIMIT`` failures within
  ``LOGIN_FAILURE_WINDOW_MINUTES`` that username is refused from that address, correct password
  or not, until the window ends. With the default local-memory cache each web process counts on
  its own (see ``CACHE_URL`` in settings).
"""
from __future__ import annotations

import datetime
import hashlib
import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone
from rest_framework.authtoken.models import Token

from annotation.services import audit
from annotation.services.projects import people

User = get_user_model()


class AccountError(ValueError):
    """A change to one's account refused; ``messages`` lists every reason."""

    def __init__(self, messages: list[str] | str):
        self.messages = [messages] if isinstance(messages, str) else list(messages)
        super().__init__(" ".join(self.messages))


# --- API tokens ---------------------------------------------------------------------------------

def token_ttl() -> datetime.timedelta | None:
    """How long a token lives; None when ``API_TOKEN_TTL_HOURS`` is 0 (tokens never expire)."""
    hours = settings.API_TOKEN_TTL_HOURS
    return datetime.timedelta(hours=hours) if hours > 0 else None


def expires_at(token: Token) -> datetime.datetime | None:
    ttl = token_ttl()
    return token.created + ttl if ttl is not None else None


def is_expired(token: Token, now: datetime.datetime | None = None) -> bool:
    end = expires_at(token)
    return end is not None and (now or timezone.now()) >= end


@dataclass(frozen=True)
class TokenState:
    """What the account page and the API say about a user's token (never the key, except right
    after it was made)."""

    exists: bool
    created: datetime.datetime | None = None
    expires_at: datetime.datetime | None = None
    expired: bool = False

    def as_dict(self) -> dict:
        return {"exists": self.exists, "created": self.created, "expires_at": self.expires_at, "expired": self.expired}


def token_state(user) -> TokenState:
    token = Token.objects.filter(user=user).first()
    if token is None:
        return TokenState(exists=False)
    return TokenState(exists=True, created=token.created, expires_at=expires_at(token), expired=is_expired(token))


def issue_token(user) -> Token:
    """The user's token for a sign-in with username and password: the current one while it is
    valid, else a new one (an expired token is replaced, recorded as a rotation)."""
    with transaction.atomic():
        token = Token.objects.select_for_update().filter(user=user).first()
        if token is not None and not is_expired(token):
            return token
        if token is not None:
            token.delete()
            audit.record("token.rotate", actor=user, target=user.get_username(), reason="expired", via="sign-in")
        return Token.objects.create(user=user)


def rotate_token(user, *, actor=None, via: str = "app") -> Token:
    """A new key for ``user``; the old one (if any) stops working at once."""
    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        token = Token.objects.create(user=user)
        audit.record("token.rotate", actor=actor, target=user.get_username(), via=via)
    return token


def revoke_tokens(user, *, actor=None, reason: str = "revoked", via: str = "app") -> bool:
    """Delete the user's token; True when there was one (only then is the revocation recorded)."""
    with transaction.atomic():
        deleted, _ = Token.objects.filter(user=user).delete()
        if deleted:
            audit.record("token.revoke", actor=actor, target=user.get_username(), reason=reason, via=via)
    return bool(deleted)


def revoke_on_password_change(sender, instance, created: bool = False, **kwargs) -> None:
    """``post_save`` receiver for the user model: a new password (``set_password`` then save)
    revokes the user's token. Django's automatic re-hashing at sign-in is not a password change (it
    clears ``_password`` before saving) and leaves the token alone."""
    if created or getattr(instance, "_password", None) is None:
        return
    revoke_tokens(instance, reason="password changed", via="password change")


# --- Password change ----------------------------------------------------------------------------

def change_password(user, *, old: str, new: str, repeat: str) -> None:
    """Change one's own password (Django's standard validators apply even where settings configure
    none). Revokes the user's API token (see :func:`revoke_on_password_change`).

    Raises:
        AccountError: a wrong current password, two different new ones, or a weak new one.
    """
    if not user.check_password(old or ""):
        raise AccountError("Your current password is not right.")
    if not new:
        raise AccountError("Enter a new password.")
    if new != repeat:
        raise AccountError("The two new passwords differ.")
    try:
        people.check_password(new, user)
    except people.PeopleError as exc:
        raise AccountError(exc.messages) from exc
    user.set_password(new)
    user.save(update_fields=["password"])


# --- Failed sign-ins ----------------------------------------------------------------------------

def _keys(address: str, username: str) -> tuple[str, str]:
    digest = hashlib.sha256(f"{address}\0{username.strip().lower()}".encode()).hexdigest()[:32]
    return f"login-failures:{digest}", f"login-failures-since:{digest}"


def _window_s() -> int:
    return max(1, settings.LOGIN_FAILURE_WINDOW_MINUTES) * 60


def login_blocked_for(address: str, username: str) -> int:
    """Seconds until ``username`` may try again from ``address``; 0 when not blocked."""
    if settings.LOGIN_FAILURE_LIMIT <= 0:
        return 0
    count_key, since_key = _keys(address, username)
    if (cache.get(count_key) or 0) < settings.LOGIN_FAILURE_LIMIT:
        return 0
    since = cache.get(since_key) or time.time()
    return max(1, math.ceil(since + _window_s() - time.time()))


def login_failed(address: str, username: str) -> int:
    """Count one failed sign-in; returns the failures within the current window."""
    count_key, since_key = _keys(address, username)
    window = _window_s()
    cache.add(since_key, time.time(), window)
    cache.add(count_key, 0, window)
    try:
        return cache.incr(count_key)
    except ValueError:  # the window ended between add and incr
        cache.set(count_key, 1, window)
        cache.set(since_key, time.time(), window)
        return 1


def login_succeeded(address: str, username: str) -> None:
    cache.delete_many(_keys(address, username))


def blocked_message(seconds: int) -> str:
    minutes = max(1, math.ceil(seconds / 60))
    return f"Too many failed attempts: try again in {minutes} minute{'s' if minutes != 1 else ''}."


def client_address(request) -> str:
    """The address failed sign-ins are counted for (the direct peer; a proxy's own forwarding header
    is not trusted, since any client can send one)."""
    return request.META.get("REMOTE_ADDR", "") or "unknown"
