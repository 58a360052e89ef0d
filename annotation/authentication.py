"""API authentication: DRF tokens that expire (``settings.API_TOKEN_TTL_HOURS``), and the rate
limit of the token endpoints."""
from __future__ import annotations

from django.db import connection
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import APIException, AuthenticationFailed
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle

from .services.projects import accounts


class ExpiringTokenAuthentication(TokenAuthentication):
    """``Authorization: Token <key>``, refused with 401 once the token is older than the TTL.

    The labelling queue's views (those with ``preload_seat``, ``views/api_queue.py``; issue 37): on PostgreSQL
    the token, its user and the annotator's seat in the URL's project (``review.annotator.load_with_token``:
    the project, scheme, membership and, for a submit, the queue counts) are one statement, where they were
    two; the same refusals (unknown token, inactive user, expired token), and the view receives the seat.
    Elsewhere (SQLite), or when the body does not parse (the view then refuses it), the token is looked up
    alone and the view loads its seat itself."""

    def authenticate(self, request):
        self._request = request
        return super().authenticate(request)

    def authenticate_credentials(self, key: str):
        view = (getattr(self, "_request", None) and self._request.parser_context or {}).get("view")
        if connection.vendor == "postgresql" and hasattr(view, "preload_seat"):
            found = self._with_seat(key, view)
            if found is not None:
                return found
        user, token = super().authenticate_credentials(key)
        self.check_expiry(token)
        return user, token

    def _with_seat(self, key: str, view) -> tuple | None:
        """(user, token) read with the view's seat, which the view receives; None when the body does not parse."""
        try:
            extra = view.seat_counts()
        except APIException as exc:  # the view refuses it once the token is known good
            view.body_error = exc
            return None
        from .services.review import annotator

        found = annotator.load_with_token(key, view.kwargs["project_pk"], **extra)
        if found is None:
            raise AuthenticationFailed("Invalid token.")
        user, token, seat = found
        if not user.is_active:
            raise AuthenticationFailed("User inactive or deleted.")
        self.check_expiry(token)
        view.preload_seat(seat)
        return user, token

    @staticmethod
    def check_expiry(token) -> None:
        if accounts.is_expired(token):
            end = accounts.expires_at(token)
            raise AuthenticationFailed(
                f"Token expired at {end:%Y-%m-%d %H:%M} UTC: get a new one with POST /api/token/ "
                "(username and password) or on your account page (/account/).")


class TokenRateThrottle(ScopedRateThrottle):
    """``throttle_scope = "token"``: per signed-in user, else per client address. The rate is read
    from the settings at each request (``API_TOKEN_THROTTLE_RATE``), not once at import."""

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)
