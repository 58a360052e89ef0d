"""One's own account: API tokens (issue, rotate, revoke, expiry), password change, and the limit
on failed sign-ins.

* **Tokens** are DRF's (one per user, the key is the credential). They expire
  ``settings.API_TOKEN_TTL_HOURS`` after they were made (0 = never): the API then answers 401 and
  signing in again (``POST /api/token/`` with username and password, or the account page) makes a
  new one. Rotating makes a new key at once (the old one stops working); revoking deletes it.
  Every password change revokes the user's token, whoever changed it and wherever (the account
  page, the admin, a script): :func:`revoke_on_password_change` listens to the user model's saves.
* **Failed sign-ins** (the login page and ``POST /api/token/``) are counted per username and per
  client address separately, atomically, in Django's cache: after ``LOGIN_FAILURE_LIMIT`` failures
  of a username (``LOGIN_ADDRESS_FAILURE_LIMIT`` from an address) within
  ``LOGIN_FAILURE_WINDOW_MINUTES`` each further attempt waits, the wait doubling from
  ``LOGIN_DELAY_SECONDS`` up to ``LOGIN_DELAY_MAX_SECONDS``; the right password works after the
  wait. The counters live in the ``limits`` cache, shared by every web process: Redis with
  ``CACHE_URL``, else a table of the database (:mod:`alignapp.cache`).
"""
from __future__ import annotations

import datetime
import hashlib
import math
import secrets
import time
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.db import transaction
from django.utils import timezone
from django.utils.connection import ConnectionProxy
from rest_framework.authtoken.models import Token

from annotation.errors import DomainError
from annotation.services import audit
from annotation.services.projects import people

User = get_user_model()


class AccountError(DomainError, ValueError):
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


def end_sessions(user_pk: int) -> int:
    """Delete every signed-in session of the user with id ``user_pk`` (returns how many): a session
    must not come back to life when the account is reactivated (or its id is reused)."""
    from importlib import import_module

    from django.contrib.sessions.models import Session

    store = import_module(settings.SESSION_ENGINE).SessionStore
    ended = 0
    for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator():
        if str(session.get_decoded().get("_auth_user_id")) == str(user_pk):
            store(session_key=session.session_key).delete()
            ended += 1
    return ended


def end_access_of_inactive(sender, instance, created: bool = False, **kwargs) -> None:
    """``post_save`` receiver for the user model: a deactivated account (by the People page, the admin
    or a script) loses its sessions and API token for good, so reactivating it needs a new sign-in."""
    if created or instance.is_active:
        return
    end_sessions(instance.pk)
    revoke_tokens(instance, reason="account deactivated", via="deactivation")


def end_access_of_removed(sender, instance, **kwargs) -> None:
    """``pre_delete`` receiver for the user model: a user removed from the site loses their sessions."""
    end_sessions(instance.pk)


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
#
# Two counters, each with its own limit: one per username (whatever the address) and one per client
# address (whatever the username). Every attempt first takes a number from the counter (an atomic
# cache ``incr``); the first ``limit`` numbers may try at once. Past the limit an attempt must claim
# the next slot: slot k opens ``delay(k)`` seconds after slot k-1 was claimed (slot 0: the limit was
# reached), with ``delay(k) = LOGIN_DELAY_SECONDS * 2**(k-1)`` up to ``LOGIN_DELAY_MAX_SECONDS``, and
# is claimed with an atomic cache ``add``, so parallel attempts never get more tries than that. A
# right password is never refused for good: it works once the current wait is over, and resets the
# username's counter. Reaching a limit is recorded in the audit log (``login.limit``).

_TIERS = ("username", "address")
#: The sign-in counters' cache, shared by the web processes (``CACHES["limits"]``).
cache = ConnectionProxy(caches, "limits")
#: A counter's value is ``window * _SPAN + failures`` (``window``: random, drawn when the window starts).
_SPAN = 10**9


def _now() -> float:
    return time.time()


def _limit(tier: str) -> int:
    return settings.LOGIN_FAILURE_LIMIT if tier == "username" else settings.LOGIN_ADDRESS_FAILURE_LIMIT


def _keys(tier: str, value: str) -> dict[str, str]:
    normal = value.strip().lower() if tier == "username" else value.strip()
    digest = hashlib.sha256(f"{tier}\0{normal}".encode()).hexdigest()[:32]
    base = f"login-{tier}:{digest}"
    return {"count": f"{base}:count", "reached": f"{base}:reached", "last": f"{base}:last", "slot": f"{base}:slot"}


def _window_s() -> int:
    return max(1, settings.LOGIN_FAILURE_WINDOW_MINUTES) * 60


def _ttl() -> int:
    return _window_s() + max(1, settings.LOGIN_DELAY_MAX_SECONDS) * 2


def delay(slot: int) -> int:
    """Seconds slot ``slot`` (1, 2, …) opens after the one before: doubling, at most LOGIN_DELAY_MAX_SECONDS."""
    base = max(1, settings.LOGIN_DELAY_SECONDS)
    return min(base * 2 ** min(max(slot, 1) - 1, 30), max(base, settings.LOGIN_DELAY_MAX_SECONDS))


def _scoped(keys: dict[str, str], value: int) -> dict[str, str]:
    """``keys`` with the slots of the window that the counter's ``value`` belongs to."""
    window = value // _SPAN
    return {**keys, **{name: f"{keys[name]}:{window}" for name in ("reached", "last", "slot")}}


def _take_number(keys: dict[str, str]) -> tuple[int, dict[str, str]]:
    """This attempt's number in the counter's window, and the window's keys. A new window starts at a
    random multiple of ``_SPAN``, so the last window's slots are never read again (no delete that could
    race with the new window's first records)."""
    while True:
        cache.add(keys["count"], secrets.randbelow(_SPAN) * _SPAN, _window_s())
        try:
            value = cache.incr(keys["count"])
        except ValueError:  # the window ended between add and incr
            continue
        return value % _SPAN, _scoped(keys, value)


def _reach(tier: str, keys: dict[str, str], *, username: str, address: str, failures: int) -> None:
    """Note when a counter reached its limit (once per window) and record it in the audit log."""
    if cache.add(keys["reached"], _now(), _ttl()):
        record_limit(tier, username=username, address=address, failures=failures)


def _claim_slot(tier: str, keys: dict[str, str], *, username: str, address: str, number: int) -> int:
    """0 when this attempt claimed the next open slot; otherwise seconds until the next one opens."""
    _reach(tier, keys, username=username, address=address, failures=number - 1)  # normally by the last failure
    now = _now()
    reached = cache.get(keys["reached"], now)
    slot, since = cache.get(keys["last"]) or (0, reached)
    opens = since + delay(slot + 1)
    if now < opens:
        return max(1, math.ceil(opens - now))
    if not cache.add(f"{keys['slot']}:{reached}:{slot + 1}", now, _ttl()):  # another attempt took it
        return delay(slot + 2)
    cache.set(keys["last"], (slot + 1, now), _ttl())
    return 0


def _tier_values(address: str, username: str) -> list[tuple[str, str]]:
    return [(tier, value) for tier, value in zip(_TIERS, (username, address)) if _limit(tier) > 0]


def begin_sign_in(address: str, username: str) -> int:
    """Take this attempt's place in both counters: 0 when it may check the password now, otherwise
    the seconds to wait (the caller answers 429 without checking the password). Call
    :func:`login_failed` or :func:`login_succeeded` after a permitted attempt."""
    taken = []
    for tier, value in _tier_values(address, username):
        keys = _keys(tier, value)
        number, scoped = _take_number(keys)
        if number > _limit(tier):
            wait = _claim_slot(tier, scoped, username=username, address=address, number=number)
            if wait:
                for earlier in taken:  # not tried: give back the places taken in the other counter
                    _give_back(earlier)
                return wait
        taken.append(keys)
    return 0


def _give_back(keys: dict[str, str]) -> None:
    try:
        cache.decr(keys["count"])
    except ValueError:  # its window ended meanwhile
        pass


def login_blocked_for(address: str, username: str) -> int:
    """Seconds until ``username`` may try again from ``address`` (0: now), without taking a place."""
    waits = [0]
    for tier, value in _tier_values(address, username):
        keys = _keys(tier, value)
        count = cache.get(keys["count"]) or 0
        keys = _scoped(keys, count)
        if count % _SPAN >= _limit(tier):
            now = _now()
            slot, since = cache.get(keys["last"]) or (0, cache.get(keys["reached"], now))
            waits.append(max(0, math.ceil(since + delay(slot + 1) - now)))
    return max(waits)


def login_failed(address: str, username: str) -> None:
    """A permitted attempt failed: keep its place in the counters (their window starts again) and
    record in the audit log when a counter reaches its limit."""
    for tier, value in _tier_values(address, username):
        keys = _keys(tier, value)
        cache.touch(keys["count"], _window_s())
        count = cache.get(keys["count"]) or 0
        failures = count % _SPAN
        if failures >= _limit(tier):
            _reach(tier, _scoped(keys, count), username=username, address=address, failures=failures)


def record_limit(tier: str, *, username: str, address: str, failures: int) -> None:
    """The audit entry for a counter that reached its limit (later attempts wait, doubling)."""
    audit.record("login.limit", target=username.strip()[:150], via="sign-in", counter=tier, address=address,
                 failures=failures, delay_seconds=delay(1))


def login_succeeded(address: str, username: str) -> None:
    """A right password resets the username's counter and gives back its place in the address's
    (whose failures run out with their window)."""
    cache.delete_many(list(_keys("username", username).values()))
    if _limit("address") > 0:
        _give_back(_keys("address", address))


def blocked_message(seconds: int) -> str:
    if seconds < 60:
        return f"Too many failed attempts: try again in {seconds} second{'s' if seconds != 1 else ''}."
    minutes = math.ceil(seconds / 60)
    return f"Too many failed attempts: try again in {minutes} minute{'s' if minutes != 1 else ''}."


def client_address(request) -> str:
    """The address failed sign-ins are counted for: the direct peer, or with
    ``LOGIN_CLIENT_ADDRESS_HEADER`` set (only behind a proxy that sets it; any client can send one) the
    last address in that header, the one the proxy saw."""
    header = settings.LOGIN_CLIENT_ADDRESS_HEADER
    if header:
        forwarded = [part.strip() for part in request.META.get(header, "").split(",") if part.strip()]
        if forwarded:
            return forwarded[-1]
    return request.META.get("REMOTE_ADDR", "") or "unknown"
