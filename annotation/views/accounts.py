"""Signing in (rate-limited) and one's own account page: the API token (make, rotate, revoke) and
the password (see :mod:`annotation.services.projects.accounts`)."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import update_session_auth_hash
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from ..services.projects import accounts
from .forms import refuses_with


class LoginView(auth_views.LoginView):
    """Django's login page; after too many failures for a username or from an address each further
    attempt waits (429 until then, the wait doubling); the right password works after the wait."""

    template_name = "accounts/login.html"

    def post(self, request, *args, **kwargs):
        wait = accounts.begin_sign_in(accounts.client_address(request), request.POST.get("username", ""))
        if wait:
            context = self.get_context_data(form=self.get_form(), blocked=accounts.blocked_message(wait))
            return self.render_to_response(context, status=429)
        return super().post(request, *args, **kwargs)

    def form_valid(self, form):
        accounts.login_succeeded(accounts.client_address(self.request), self.request.POST.get("username", ""))
        return super().form_valid(form)

    def form_invalid(self, form):
        accounts.login_failed(accounts.client_address(self.request), self.request.POST.get("username", ""))
        return super().form_invalid(form)


def _render(request: HttpRequest, *, new_token=None, password_errors: list[str] | None = None,
            status: int = 200) -> HttpResponse:
    ttl = accounts.token_ttl()
    context = {"token": accounts.token_state(request.user), "new_token": new_token,
               "ttl_hours": int(ttl.total_seconds() // 3600) if ttl else None, "password_errors": password_errors or []}
    return render(request, "accounts/account.html", context, status=status)


@never_cache
@login_required
def account_page(request: HttpRequest) -> HttpResponse:
    return _render(request)


@never_cache  # the page shows the new key once: never from a cache, never again
@login_required
@require_POST
def rotate_token(request: HttpRequest) -> HttpResponse:
    token = accounts.rotate_token(request.user, actor=request.user)
    return _render(request, new_token=token)


@login_required
@require_POST
def revoke_token(request: HttpRequest) -> HttpResponse:
    if accounts.revoke_tokens(request.user, actor=request.user):
        messages.success(request, "API token revoked: it no longer works.")
    else:
        messages.info(request, "You had no API token.")
    return redirect("account")


@never_cache
@login_required
@require_POST
@refuses_with(lambda request, error: _render(request, password_errors=getattr(error, "messages", [str(error)]),
                                             status=error.status))
def change_password(request: HttpRequest) -> HttpResponse:
    accounts.change_password(request.user, old=request.POST.get("old_password", ""),
                             new=request.POST.get("new_password1", ""), repeat=request.POST.get("new_password2", ""))
    update_session_auth_hash(request, request.user)  # stay signed in here; other sessions end
    messages.success(request, "Password changed. Your API token (if you had one) was revoked: make a new one below.")
    return redirect("account")
