"""Accounts, as site admins manage them in the app: create a user with a password (Django's password
validators check it), or invite one with a signed link that expires and works once; deactivate and
reactivate; find users by the start of their name (to add them to a project).

No email server is needed: the admin copies the invitation link and sends it however they like.
"""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import Group
from django.core import signing
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.crypto import constant_time_compare, salted_hmac

from annotation.errors import DomainError
from annotation.permissions import RESEARCHERS_GROUP, can_create_projects, is_admin, researched_projects
from annotation.services import audit

User = get_user_model()

INVITATION_SALT = "alignapp.invitation"
#: How long an invitation link works (seconds); ``ALIGNAPP_INVITATION_MAX_AGE`` in settings overrides it.
INVITATION_MAX_AGE = 7 * 24 * 3600
#: Most users one search returns.
SEARCH_LIMIT = 10
#: Django's standard validators, used for accounts created in the app even where settings configure none
#: (the embedded default leaves AUTH_PASSWORD_VALIDATORS empty for the demo accounts).
STANDARD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]


class PeopleError(DomainError, ValueError):
    """A change refused; ``messages`` lists every reason (e.g. each password validator's)."""

    def __init__(self, messages: list[str] | str):
        self.messages = [messages] if isinstance(messages, str) else list(messages)
        super().__init__(" ".join(self.messages))


def _validators() -> list:
    return password_validation.get_password_validators(settings.AUTH_PASSWORD_VALIDATORS or STANDARD_VALIDATORS)


def check_password(password: str, user) -> None:
    """Raises PeopleError with the validators' messages when ``password`` is too weak for ``user``."""
    try:
        password_validation.validate_password(password, user=user, password_validators=_validators())
    except ValidationError as exc:
        raise PeopleError(list(exc.messages)) from exc


def _new_user(username: str, *, email: str = "", researcher: bool = False):
    username = username.strip()
    if not username:
        raise PeopleError("Enter a username.")
    field = User._meta.get_field(User.USERNAME_FIELD)
    try:
        field.run_validators(username)
    except ValidationError as exc:
        raise PeopleError(list(exc.messages)) from exc
    if User.objects.filter(username__iexact=username).exists():
        raise PeopleError(f"A user named {username!r} exists already.")
    return User(username=username, email=email.strip())


def _save(user, researcher: bool):
    user.save()
    if researcher:
        user.groups.add(Group.objects.get_or_create(name=RESEARCHERS_GROUP)[0])
    return user


@transaction.atomic
def create_user(username: str, password: str, *, email: str = "", researcher: bool = False, by=None):
    """A new active user with ``password``; ``researcher`` puts them in the group that may create projects.

    Raises:
        PeopleError: a blank, invalid or taken username, or a password the validators refuse.
    """
    user = _new_user(username, email=email, researcher=researcher)
    check_password(password, user)
    user.set_password(password)
    _save(user, researcher)
    audit.record("user.create", actor=by, target=user.username, researcher=researcher)
    return user


@transaction.atomic
def invite_user(username: str, *, email: str = "", researcher: bool = False, by=None):
    """A new user without a usable password, and the token of their invitation link.

    Returns:
        ``(user, token)``; the link is ``reverse("accept-invitation", args=[token])``.
    """
    user = _new_user(username, email=email, researcher=researcher)
    user.set_unusable_password()
    _save(user, researcher)
    audit.record("user.invite", actor=by, target=user.username, researcher=researcher)
    return user, invitation_token(user)


def _fingerprint(user) -> str:
    # changes when the password does: a used invitation stops working
    return salted_hmac(INVITATION_SALT, f"{user.pk}:{user.password}").hexdigest()[:24]


def invitation_token(user) -> str:
    """A signed, timestamped token naming the user (works until they set a password or it expires)."""
    return signing.dumps({"u": user.pk, "f": _fingerprint(user)}, salt=INVITATION_SALT, compress=True)


def invitation_user(token: str, *, max_age: int | None = None):
    """The invited user a token names.

    Raises:
        PeopleError: the link expired, was used already, was changed, or its user is deactivated.
    """
    max_age = max_age if max_age is not None else getattr(settings, "ALIGNAPP_INVITATION_MAX_AGE", INVITATION_MAX_AGE)
    try:
        data = signing.loads(token, salt=INVITATION_SALT, max_age=max_age)
    except signing.SignatureExpired as exc:
        raise PeopleError("This invitation link has expired. Ask an admin for a new one.") from exc
    except signing.BadSignature as exc:
        raise PeopleError("This invitation link is not valid. Check that you copied all of it.") from exc
    user = User.objects.filter(pk=data.get("u")).first()
    if user is None or not user.is_active:
        raise PeopleError("This invitation is no longer valid: the account was removed or deactivated.")
    if not constant_time_compare(str(data.get("f", "")), _fingerprint(user)):
        raise PeopleError("This invitation link was used already. Log in with the password you chose.")
    return user


@transaction.atomic
def accept_invitation(token: str, password: str):
    """Set the invited user's password (once).

    Raises:
        PeopleError: an invalid, expired or used link, or a password the validators refuse.
    """
    invited = invitation_user(token)
    user = User.objects.select_for_update().get(pk=invited.pk)
    if user.password != invited.password:  # a second tab set it meanwhile
        raise PeopleError("This invitation link was used already. Log in with the password you chose.")
    check_password(password, user)
    user.set_password(password)
    user.save(update_fields=["password"])
    return user


def set_active(user, active: bool, *, by):
    """Deactivate (they can no longer log in or use the API; their labels stay) or reactivate a user.

    Raises:
        PeopleError: an admin deactivating themselves.
    """
    if not active and user.pk == by.pk:
        raise PeopleError("You cannot deactivate your own account.")
    changed = user.is_active != active
    user.is_active = active
    user.save(update_fields=["is_active"])
    if changed:
        audit.record("user.activate" if active else "user.deactivate", actor=by, target=user.username)
    # deactivation ends their sessions and API token for good (accounts.end_access_of_inactive, on save)
    return user


def can_search_users(user) -> bool:
    """Admins, members of the researchers group and researchers of any project."""
    return is_admin(user) or can_create_projects(user) or researched_projects(user).exists()


def search_users(prefix: str, *, limit: int = SEARCH_LIMIT) -> list:
    """Active users whose username starts with ``prefix`` (case-insensitive), at most ``limit``."""
    prefix = prefix.strip()
    if not prefix:
        return []
    return list(User.objects.filter(is_active=True, username__istartswith=prefix).order_by("username")[:limit])


def people_rows() -> list:
    """Every account for the admins' people page, active ones first."""
    return list(User.objects.prefetch_related("groups").order_by("-is_active", "username"))
