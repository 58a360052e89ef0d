"""Shared fixtures: one set of users and one project with every role, API clients per user."""
from __future__ import annotations

import os

import pytest

from tests import factories

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def users(db):
    """admin (staff), rita (researcher in project), anna (annotator in project), olga (outsider:
    an annotator of another project), and ursula (researcher of another project)."""
    return {
        "admin": factories.make_user("admin", staff=True),
        "rita": factories.make_user("rita", researcher=True),
        "anna": factories.make_user("anna"),
        "olga": factories.make_user("olga"),
        "ursula": factories.make_user("ursula", researcher=True),
    }


@pytest.fixture
def project(users):
    project = factories.make_project("Newsela sample", rita="researcher", anna="annotator")
    factories.make_project("Other", olga="annotator", ursula="researcher")
    return project


@pytest.fixture
def api():
    """``api(user)`` → a DRF client authenticated with that user's token (None = anonymous)."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    def make(user=None):
        client = APIClient()
        if user is not None:
            token, _ = Token.objects.get_or_create(user=user)
            client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client

    return make


def require_service(reason: str) -> None:
    """Skip with a visible reason, or fail when CI demands real services (REQUIRE_SERVICES=1)."""
    if os.environ.get("REQUIRE_SERVICES") == "1":
        pytest.fail(f"required service missing: {reason}")
    pytest.skip(reason)


@pytest.fixture
def postgres_db(transactional_db):
    """A committed-transaction database that must be PostgreSQL."""
    from django.db import connection

    if connection.vendor != "postgresql":
        require_service("PostgreSQL not configured (set DATABASE_URL=postgres://...)")
    return connection


@pytest.fixture(scope="session")
def redis_url() -> str:
    url = os.environ.get("TEST_REDIS_URL")
    if not url:
        require_service("Redis not configured (set TEST_REDIS_URL=redis://...)")
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        require_service(f"Redis at {url} not reachable: {exc}")
    return url


from tests.worker_process import embedded_worker, redis_worker  # noqa: E402,F401 - shared fixtures
