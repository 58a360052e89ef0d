"""People: the admins' page to create, invite, deactivate and reactivate accounts, and the page an
invited person opens to choose a password. The logic lives in ``services.people``."""
from __future__ import annotations

import functools

from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from ..errors import DomainError
from ..permissions import is_admin
from ..services.projects import people
from .forms import back_with_message, refuses_with

User = get_user_model()


def _admin_only(request: HttpRequest) -> None:
    if not is_admin(request.user):
        raise PermissionDenied("only site admins manage people")


def _user_input(request: HttpRequest) -> dict:
    return {"username": request.POST.get("username", ""), "email": request.POST.get("email", ""),
            "researcher": request.POST.get("researcher") == "on"}


def _render(request: HttpRequest, *, refused: str = "", error: DomainError | None = None,
            invitation: dict | None = None, status: int = 200) -> HttpResponse:
    """The page; ``refused``: the form (``create`` or ``invite``) the ``error`` refused, with what was submitted."""
    problems = list(getattr(error, "messages", None) or [str(error)]) if error is not None else []
    context = {
        "people": people.people_rows(),
        "create": _user_input(request) if refused == "create" else {},
        "create_errors": problems if refused == "create" else [],
        "invite": _user_input(request) if refused == "invite" else {},
        "invite_errors": problems if refused == "invite" else [],
        "invitation": invitation,
        "max_age_days": people.INVITATION_MAX_AGE // 86400,
    }
    return render(request, "people/people.html", context, status=status)


def _admins_form(form: str):
    """Declares the POST view of an admins' form: site admins only; a refusal shows the page again, ``form`` with
    what was submitted and the error (``views.forms``)."""
    refused = refuses_with(lambda request, error: _render(request, refused=form, error=error, status=error.status))

    def declare(view):
        @functools.wraps(view)
        def admins_only(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            _admin_only(request)
            return view(request, *args, **kwargs)
        return login_required(require_POST(refused(admins_only)))
    return declare


def _same_passwords(request: HttpRequest) -> str:
    """The chosen password, once the two fields agree."""
    password, again = request.POST.get("password1", ""), request.POST.get("password2", "")
    if password != again:
        raise people.PeopleError("The two passwords differ.")
    return password


@login_required
def people_page(request: HttpRequest) -> HttpResponse:
    _admin_only(request)
    return _render(request)


@_admins_form("create")
def create_user(request: HttpRequest) -> HttpResponse:
    form = _user_input(request)
    user = people.create_user(form["username"], _same_passwords(request), email=form["email"],
                              researcher=form["researcher"], by=request.user)
    messages.success(request, f"{user.username} can now log in.")
    return redirect("people")


@_admins_form("invite")
def invite_user(request: HttpRequest) -> HttpResponse:
    form = _user_input(request)
    user, token = people.invite_user(form["username"], email=form["email"], researcher=form["researcher"],
                                     by=request.user)
    link = request.build_absolute_uri(reverse("accept-invitation", args=[token]))
    return _render(request, invitation={"username": user.username, "link": link})


@login_required
@require_POST
@refuses_with(back_with_message("people"))
def set_active(request: HttpRequest, pk: int) -> HttpResponse:
    _admin_only(request)
    user = get_object_or_404(User, pk=pk)
    active = request.POST.get("active") == "1"
    people.set_active(user, active, by=request.user)
    messages.success(request, f"{user.username} reactivated." if active
                     else f"{user.username} deactivated: they can no longer log in; their labels stay.")
    return redirect("people")


def _invitation_page(request: HttpRequest, invited, error: DomainError | None = None) -> HttpResponse:
    errors = list(getattr(error, "messages", None) or [str(error)]) if error is not None else []
    return render(request, "people/invitation.html", {"invited": invited, "errors": errors},
                  status=error.status if error is not None else 200)


@refuses_with(lambda request, error, invited, token: _invitation_page(request, invited, error))
def _choose_password(request: HttpRequest, invited, token: str) -> HttpResponse:
    """The invitation's form: a refused password (or a link used meanwhile) shows the form again."""
    user = people.accept_invitation(token, _same_passwords(request))
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    messages.success(request, f"Welcome, {user.username}! Your password is set.")
    return redirect("home")


@never_cache
@refuses_with(lambda request, error, token: render(request, "people/invitation.html", {"problem": str(error)},
                                                   status=error.status))
def accept_invitation(request: HttpRequest, token: str) -> HttpResponse:
    """Open to anyone holding the link: choose a password, then you are logged in. A refused link (expired,
    used, changed) is the page with the problem."""
    invited = people.invitation_user(token)
    if request.method != "POST":
        return _invitation_page(request, invited)
    return _choose_password(request, invited, token)
