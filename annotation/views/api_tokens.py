"""API tokens (see :mod:`annotation.services.projects.accounts`).

* ``POST /api/token/ {username, password}`` → ``{token, created, expires_at}``: the user's valid
  token, or a new one (none yet, or expired). Failed attempts count towards the sign-in limit
  (429 once reached, like the login page).
* ``POST /api/token/rotate/`` (signed in) → a new key; the old one stops working at once.
* ``DELETE /api/token/`` (signed in) → 204; the token is deleted.

All three are rate-limited (``API_TOKEN_THROTTLE_RATE``, 429 with ``Retry-After``).
"""
from __future__ import annotations

from django.contrib.auth import authenticate
from rest_framework import status
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from ..authentication import TokenRateThrottle
from ..serializers import Credentials
from ..services.projects import accounts


def token_payload(token) -> dict:
    return {"token": token.key, "created": token.created, "expires_at": accounts.expires_at(token)}


class TokenView(APIView):
    throttle_classes = [TokenRateThrottle]
    throttle_scope = "token"

    def get_authenticators(self):
        # signing in with a password needs no credentials (an expired token in the header must not
        # stand in the way of getting a new one); revoking does
        return [] if self._signing_in() else super().get_authenticators()

    def get_permissions(self):
        return [AllowAny()] if self._signing_in() else [IsAuthenticated()]

    def _signing_in(self) -> bool:
        return getattr(getattr(self, "request", None), "method", "") == "POST"

    def post(self, request):
        data = Credentials(data=request.data)
        data.is_valid(raise_exception=True)
        username, password = data.validated_data["username"], data.validated_data["password"]
        address = accounts.client_address(request)
        wait = accounts.begin_sign_in(address, username)
        if wait:
            return Response({"detail": accounts.blocked_message(wait)}, status=status.HTTP_429_TOO_MANY_REQUESTS,
                            headers={"Retry-After": str(wait)})
        user = authenticate(request._request, username=username, password=password)
        if user is None:
            accounts.login_failed(address, username)
            return Response({"detail": "Unable to sign in with that username and password."},
                            status=status.HTTP_400_BAD_REQUEST)
        accounts.login_succeeded(address, username)
        return Response(token_payload(accounts.issue_token(user)))

    def delete(self, request):
        accounts.revoke_tokens(request.user, actor=request.user, via="api")
        return Response(status=status.HTTP_204_NO_CONTENT)


class RotateTokenView(APIView):
    permission_classes = [IsAuthenticated]
    throttle_classes = [TokenRateThrottle]
    throttle_scope = "token"

    def post(self, request):
        return Response(token_payload(accounts.rotate_token(request.user, actor=request.user, via="api")),
                        status=status.HTTP_201_CREATED)
