"""Shared fixtures: one set of users and one project with every role, API clients per user."""
from __future__ import annotations

import os

import pytest

from tests import factories

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# Celery workers the tests start on the filesystem broker look for messages every 0.1 s, not every second
os.environ.setdefault("CELERY_BROKER_POLL_MS", "100")


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _fresh_local_cache():
    """Each test starts with an empty in-process cache: figures cached per state of the data (dashboard, run
    scores, the training set) are keyed by row counts and ids, which a rolled-back test database can give
    again in the next test (SQLite reuses ids). A Redis cache (``CACHE_URL``) is left alone."""
    from django.core.cache import caches
    from django.core.cache.backends.locmem import LocMemCache

    if isinstance(caches["default"], LocMemCache):
        caches["default"].clear()


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




# --- The embedded-default pass ------------------------------------------------------------------------
# `.ci/run` runs the whole suite once on PostgreSQL + Redis (+ the filesystem broker, which the
# `embedded_worker` tests use there too), then again on the embedded default (SQLite + the filesystem
# broker) only the tests marked `backend`: those whose code takes a different path, or different SQL, on
# SQLite. Chosen by what differs, not by area:
BACKEND_MODULES = (
    # SQLite-only code: imports write in batches outside one transaction, WAL and busy timeout, and a
    # failed or killed import must still leave nothing behind
    "tests/annotation/services/corpus/importing/test_limits.py",
    "tests/annotation/services/corpus/importing/test_validation.py",
    "tests/annotation/views/test_import_crash_safety.py",
    "tests/annotation/services/corpus/importing/test_recovery.py",
    # SQL that each backend writes its own way: upserts (bulk_create on conflict), JSON key lookups,
    # select_for_update(skip_locked/of) with its SQLite fallback
    "tests/annotation/services/alignment/test_alignment_runs.py",
    "tests/annotation/services/alignment/test_run_chunks.py",
    "tests/annotation/services/alignment/test_run_saving.py",
    "tests/annotation/services/editing/test_paragraph_correction.py",
    "tests/annotation/services/alignment/test_paragraph_alignment.py",
    "tests/annotation/services/review/test_adjudication.py",
    "tests/annotation/services/review/test_queue.py",
    "tests/annotation/services/review/test_queue_pair_identity.py",
    "tests/annotation/services/export/test_splits.py",
    # issue 37: the comparison of two runs is one raw FULL JOIN (PostgreSQL also sets work_mem), the
    # export preview's stored parts an upsert
    "tests/annotation/services/alignment/test_run_comparison.py",
    "tests/annotation/services/export/test_preview_parts.py",
    # issue 37, the labelling loop: the label and its assignment one statement on PostgreSQL (two
    # elsewhere), the API token read with the queue's seat on PostgreSQL, its statements prepared there
    "tests/annotation/services/review/test_labelling.py",
    "tests/annotation/services/review/test_queue_compiled.py",
    "tests/annotation/views/test_api_queue.py",
    # data migrations (SQLite rebuilds tables to alter them)
    "tests/annotation/test_pair_identity_migration.py",
    "tests/annotation/test_per_link_migration.py",
    # the demo itself: `make demo`'s command, its pages, and the worker writing nothing outside var/
    "tests/annotation/commands/test_run_demo.py",
    "tests/browser/test_demo_pages.py",
    "tests/test_repository.py",
)
# ... and every test that runs a real worker on the filesystem broker (`embedded_worker`): the web
# process and a worker process sharing one SQLite file is the embedded default's own concurrency.
BACKEND_FIXTURES = ("embedded_worker",)


def pytest_collection_modifyitems(config, items):
    root = config.rootpath
    for item in items:
        module = item.path.relative_to(root).as_posix() if item.path.is_relative_to(root) else ""
        if module in BACKEND_MODULES or any(name in getattr(item, "fixturenames", ()) for name in BACKEND_FIXTURES):
            item.add_marker(pytest.mark.backend)
    items.sort(key=run_order)


def run_order(item) -> tuple[int, bool]:
    """Tests in a transaction first, then those that commit (their flush empties what migrations wrote, as
    in pytest-django's own order), then those without a database; in each group the ``slow`` ones first,
    so that on two xdist workers the long tests start early and the short ones fill the end."""
    if item.get_closest_marker("first_in_process"):  # before anything else has grown the process (2026-11-28)
        return -1, False
    names = getattr(item, "fixturenames", ())
    marker = item.get_closest_marker("django_db")
    commits = ("transactional_db" in names or "live_server" in names
               or (marker is not None and (marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences"))))
    uses_db = commits or "db" in names or marker is not None
    group = 1 if commits else 0 if uses_db else 2
    return group, item.get_closest_marker("slow") is None


from tests.worker_process import embedded_worker, redis_worker  # noqa: E402,F401 - shared fixtures
