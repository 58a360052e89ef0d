"""API authentication: DRF tokens that expire (``settings.API_TOKEN_TTL_HOURS``), and the rate
limit of the token endpoints."""
from __future__ import annotations

from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle

from .services.projects import accounts


class ExpiringTokenAuthentication(TokenAuthentication):
    """``Authorization: Token <key>``, refused with 401 once the token is older than the TTL."""

    def authenticate_credentials(self, key: str):
        user, token = super().authenticate_credentials(key)
        if accounts.is_expired(token):
            end = accounts.expires_at(token)
            raise AuthenticationFailed(
                f"Token expired at {end:%Y-%m-%d %H:%M} UTC: get a new one with POST /api/token/ "
                "(username and password) or on your account page (/account/).")
        return user, token


class TokenRateThrottle(ScopedRateThrottle):
    """``throttle_scope = "token"``: per signed-in user, else per client address. The rate is read
    from the settings at each request (``API_TOKEN_THROTTLE_RATE``), not once at import."""

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)
