"""People: the admins' page to create, invite, deactivate and reactivate accounts, and the page an
invited person opens to choose a password. The logic lives in ``services.people``."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from ..permissions import is_admin
from ..services.projects import people

User = get_user_model()


def _admin_only(request: HttpRequest) -> None:
    if not is_admin(request.user):
        raise PermissionDenied("only site admins manage people")


def _render(request: HttpRequest, *, create: dict | None = None, create_errors: list | None = None,
            invite: dict | None = None, invite_errors: list | None = None, invitation: dict | None = None,
            status: int = 200) -> HttpResponse:
    context = {
        "people": people.people_rows(),
        "create": create or {}, "create_errors": create_errors or [],
        "invite": invite or {}, "invite_errors": invite_errors or [],
        "invitation": invitation,
        "max_age_days": people.INVITATION_MAX_AGE // 86400,
    }
    return render(request, "people/people.html", context, status=status)


@login_required
def people_page(request: HttpRequest) -> HttpResponse:
    _admin_only(request)
    return _render(request)


@login_required
@require_POST
def create_user(request: HttpRequest) -> HttpResponse:
    _admin_only(request)
    form = {"username": request.POST.get("username", ""), "email": request.POST.get("email", ""),
            "researcher": request.POST.get("researcher") == "on"}
    password, again = request.POST.get("password1", ""), request.POST.get("password2", "")
    try:
        if password != again:
            raise people.PeopleError("The two passwords differ.")
        user = people.create_user(form["username"], password, email=form["email"], researcher=form["researcher"],
                                  by=request.user)
    except people.PeopleError as exc:
        return _render(request, create=form, create_errors=exc.messages, status=400)
    messages.success(request, f"{user.username} can now log in.")
    return redirect("people")


@login_required
@require_POST
def invite_user(request: HttpRequest) -> HttpResponse:
    _admin_only(request)
    form = {"username": request.POST.get("username", ""), "email": request.POST.get("email", ""),
            "researcher": request.POST.get("researcher") == "on"}
    try:
        user, token = people.invite_user(form["username"], email=form["email"], researcher=form["researcher"],
                                         by=request.user)
    except people.PeopleError as exc:
        return _render(request, invite=form, invite_errors=exc.messages, status=400)
    link = request.build_absolute_uri(reverse("accept-invitation", args=[token]))
    return _render(request, invitation={"username": user.username, "link": link})


@login_required
@require_POST
def set_active(request: HttpRequest, pk: int) -> HttpResponse:
    _admin_only(request)
    user = get_object_or_404(User, pk=pk)
    active = request.POST.get("active") == "1"
    try:
        people.set_active(user, active, by=request.user)
    except people.PeopleError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"{user.username} reactivated." if active
                         else f"{user.username} deactivated: they can no longer log in; their labels stay.")
    return redirect("people")


@never_cache
def accept_invitation(request: HttpRequest, token: str) -> HttpResponse:
    """Open to anyone holding the link: choose a password, then you are logged in."""
    try:
        invited = people.invitation_user(token)
    except people.PeopleError as exc:
        return render(request, "people/invitation.html", {"problem": str(exc)}, status=400)
    errors: list[str] = []
    if request.method == "POST":
        password, again = request.POST.get("password1", ""), request.POST.get("password2", "")
        try:
            if password != again:
                raise people.PeopleError("The two passwords differ.")
            user = people.accept_invitation(token, password)
        except people.PeopleError as exc:
            errors = exc.messages
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, f"Welcome, {user.username}! Your password is set.")
            return redirect("home")
    return render(request, "people/invitation.html", {"invited": invited, "errors": errors},
                  status=400 if errors else 200)
