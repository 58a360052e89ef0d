"""Django settings, all from the environment with safe defaults.

With no environment at all the application runs on the *embedded default*: SQLite in ``var/``,
a Celery broker on kombu's filesystem transport (no server), DEBUG off, a random key made for this
installation (``var/secret_key``). ``ALIGNAPP_ENV`` is ``development`` (DEBUG on), ``production``
(a real ``SECRET_KEY`` of 50+ characters, secure cookies, DEBUG refused) or ``test``; anything else
stops the start. DEBUG is on only when asked for: ``DEBUG=1`` or ``ALIGNAPP_ENV=development``.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from .env import (
    env_bool,
    env_choice,
    env_int,
    env_list,
    env_proxy_header,
    env_request_header,
    env_str,
    local_secret_key,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("ALIGNAPP_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ENVIRONMENTS = ("development", "production", "test")
ALIGNAPP_ENV = env_choice("ALIGNAPP_ENV", ENVIRONMENTS, default="")  # "" = not set: the embedded default
PRODUCTION = ALIGNAPP_ENV == "production"

# Keys that are public (in this repository, its history or Django's templates) or too weak to sign sessions.
KNOWN_INSECURE_KEYS = frozenset({"dev-only-insecure-key-not-for-production", "change-me", "s3cret", "secret"})
MIN_SECRET_KEY_LENGTH = 50
SECRET_KEY = env_str("SECRET_KEY")
if PRODUCTION:
    if not SECRET_KEY:
        raise ImproperlyConfigured("SECRET_KEY must be set when ALIGNAPP_ENV=production")
    if (len(SECRET_KEY) < MIN_SECRET_KEY_LENGTH or SECRET_KEY in KNOWN_INSECURE_KEYS
            or SECRET_KEY.startswith("django-insecure") or len(set(SECRET_KEY)) < 5):
        raise ImproperlyConfigured(
            f"SECRET_KEY is too short or a known key: production needs {MIN_SECRET_KEY_LENGTH}+ random characters "
            "(python -c 'import secrets; print(secrets.token_urlsafe(50))')")
elif not SECRET_KEY:
    SECRET_KEY = local_secret_key(VAR_DIR / "secret_key")

# DEBUG only when asked for; never in production (its error pages show settings, the database's included).
DEBUG = env_bool("DEBUG", default=ALIGNAPP_ENV == "development")
if PRODUCTION and DEBUG:
    raise ImproperlyConfigured("DEBUG must be off when ALIGNAPP_ENV=production")
DEFAULT_EXCEPTION_REPORTER_FILTER = "alignapp.log_filters.ExceptionReporterFilter"  # hides *_URL (passwords)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", [] if PRODUCTION else ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# --- HTTPS (behind a TLS-terminating proxy: SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto=https")
SECURE_PROXY_SSL_HEADER = env_proxy_header("SECURE_PROXY_SSL_HEADER")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # the container's own plain-HTTP health check
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", PRODUCTION)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", PRODUCTION)

# --- Content-Security-Policy (alignapp.csp.ContentSecurityPolicyMiddleware): every script and style
# comes from our own static files; pages pass data through json_script blocks, which are not executed.
CONTENT_SECURITY_POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "font-src": "'self'",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}
CSP_REPORT_ONLY = env_bool("CSP_REPORT_ONLY", False)  # report violations in the browser console, block nothing

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "annotation",
    "workers",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "alignapp.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "annotation.middleware.RequestGuardMiddleware",  # NUL in query/form → 400, path ids past 64 bits → 404
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "alignapp.urls"
WSGI_APPLICATION = "alignapp.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "frontend" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

# --- Database: DATABASE_URL (postgres://...) or the embedded SQLite file.
_default_sqlite = f"sqlite:///{VAR_DIR / 'alignapp.sqlite3'}"
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", _default_sqlite), conn_max_age=env_int("DB_CONN_MAX_AGE", 0)
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Several processes (web + worker) share the file: wait for locks instead of failing.
    # WAL: readers never wait for the writer; busy timeout: a writer waits for the lock (an import
    # commits in short batches, so annotators' submits get through while it runs).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": env_int("SQLITE_TIMEOUT", 30), "transaction_mode": "IMMEDIATE",
         "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"}
    )
    # A file, not :memory:, so a Celery worker process started by the tests sees the test database.
    # One file per test process, so parallel test runs never share it.
    _test_db = Path(tempfile.gettempdir()) / f"alignapp-test-{os.getpid()}.sqlite3"
    DATABASES["default"]["TEST"] = {"NAME": env_str("SQLITE_TEST_NAME", str(_test_db))}
else:
    # Issue 37: the labelling loop's few statements (annotation/services/review/queue_compiled.py, ``cursor``) bind
    # their parameters on the server and are prepared once run this many times on a connection, so PostgreSQL
    # plans each once per connection (planning them cost 2.5× running them). The threshold is set on the psycopg
    # connection only while one of those statements runs: the connection's own option stays off, because psycopg
    # applies it to every query and keeps each query's text to count it (up to 100) — a bulk INSERT's literal
    # arrays included: an import's memory grew with the corpus (test_limits, 2026-11-28). 0 turns it off
    # (behind a transaction-mode pooler such as PgBouncer's).
    DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = None
DB_PREPARE_THRESHOLD = max(env_int("DB_PREPARE_THRESHOLD", 2), 0)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = (
    [
        {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
        {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
        {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    ]
    if PRODUCTION
    else []
)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "frontend" / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "staticfiles")))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))
MODEL_ROOT = Path(env_str("MODEL_ROOT", str(VAR_DIR / "models")))
# Where a project's encoder / spaCy pipeline / a job's model may be read from, besides packaged names,
# the bundled models' folder (always allowed) and the project's own model versions
# (annotation/services/projects/model_paths.py); comma-separated.
MODEL_ROOTS = env_list("MODEL_ROOTS", [str(MODEL_ROOT)])

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# --- Uploads / imports (limits: annotation/services/corpus/importing/limits.py)
MAX_UPLOAD_BYTES = env_int("MAX_UPLOAD_BYTES", 50 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_UPLOAD_BYTES
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
IMPORT_MAX_BYTES = env_int("IMPORT_MAX_BYTES", 200 * 1024 * 1024)
IMPORT_MAX_FILES = env_int("IMPORT_MAX_FILES", 10_000)
IMPORT_MAX_LINES = env_int("IMPORT_MAX_LINES", 500_000)
IMPORT_MAX_SENTENCES_PER_DOCUMENT = env_int("IMPORT_MAX_SENTENCES_PER_DOCUMENT", 10_000)
IMPORT_MAX_ARTICLES = env_int("IMPORT_MAX_ARTICLES", 200_000)
# Sentences in one import, counted as they are produced (a metadata file naming one text many times
# multiplies it; IMPORT_MAX_BYTES bounds the characters produced the same way).
IMPORT_MAX_SENTENCES = env_int("IMPORT_MAX_SENTENCES", 500_000)
IMPORT_BACKGROUND_BYTES = env_int("IMPORT_BACKGROUND_BYTES", 2 * 1024 * 1024)
# Bounded memory per line: a longer line is refused while it is read (never parsed), a longer
# document text before it is split into sentences, a longer sentence after.
IMPORT_MAX_LINE_BYTES = env_int("IMPORT_MAX_LINE_BYTES", 16 * 1024 * 1024)
IMPORT_MAX_DOCUMENT_CHARS = env_int("IMPORT_MAX_DOCUMENT_CHARS", 2_000_000)
IMPORT_MAX_SENTENCE_CHARS = env_int("IMPORT_MAX_SENTENCE_CHARS", 20_000)
# Staged upload files (upload-*, work-*, Django's tmp*.upload*) under IMPORT_DIR that no live import
# uses are removed by the liveness sweep once untouched for this long (a request or job killed mid-import).
IMPORT_STALE_SECONDS = env_int("IMPORT_STALE_SECONDS", 3600)
IMPORT_DIR = Path(env_str("IMPORT_DIR", str(VAR_DIR / "imports")))
IMPORT_DIR.mkdir(parents=True, exist_ok=True)
# Every uploaded file streams to a temporary file under IMPORT_DIR (never whole in memory), cut off
# by the first handler once it passes the import limits.
FILE_UPLOAD_HANDLERS = ["annotation.services.corpus.importing.uploads.LimitedUploadHandler",
                        "django.core.files.uploadhandler.TemporaryFileUploadHandler"]
FILE_UPLOAD_TEMP_DIR = str(IMPORT_DIR)
DATA_UPLOAD_MAX_NUMBER_FILES = IMPORT_MAX_FILES + 1  # LimitedUploadHandler refuses the file past the limit first
# Per-article endpoints: sentences of one document per response, and the largest complex × simple
# sentence matrix a request computes (automatic paragraph links); bigger answers 413.
ARTICLE_MAX_SENTENCES = env_int("ARTICLE_MAX_SENTENCES", 10_000)
ARTICLE_MAX_SIMILARITY_CELLS = env_int("ARTICLE_MAX_SIMILARITY_CELLS", 4_000_000)
# The article page shows its documents this many sentences at a time (Page x of y).
ARTICLE_PAGE_SENTENCES = env_int("ARTICLE_PAGE_SENTENCES", 300)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "annotation.authentication.ExpiringTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # one input guard for every JSON body: no lone surrogates / NUL, finite numbers, 64-bit integers
    "DEFAULT_PARSER_CLASSES": ["annotation.parsers.StrictJSONParser", "annotation.parsers.StrictFormParser",
                               "annotation.parsers.StrictMultiPartParser"],
    "DEFAULT_SCHEMA_CLASS": "annotation.schema.AutoSchema",
    # the services' refusals (annotation.errors.DomainError) answered once, with their status and code
    "EXCEPTION_HANDLER": "annotation.views.refusals.exception_handler",
    # keyset (cursor) pages: the last page as fast as the first, the total counted once (annotation/pagination.py)
    "DEFAULT_PAGINATION_CLASS": "annotation.pagination.KeysetPagination",
    "PAGE_SIZE": env_int("API_PAGE_SIZE", 100),
    # /api/token/ (sign-in with a password, rotate, revoke): per signed-in user, or per address
    "DEFAULT_THROTTLE_RATES": {"token": env_str("API_TOKEN_THROTTLE_RATE", "20/min")},
}

# --- Accounts: API tokens expire (0 = never); failed log-ins per address and username are limited.
API_TOKEN_TTL_HOURS = env_int("API_TOKEN_TTL_HOURS", 720)
# Failed sign-ins are counted per username and per client address; past a limit each attempt waits
# (doubling from LOGIN_DELAY_SECONDS up to LOGIN_DELAY_MAX_SECONDS), the right password works after it.
LOGIN_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10)  # per username (0: no limit)
LOGIN_ADDRESS_FAILURE_LIMIT = env_int("LOGIN_ADDRESS_FAILURE_LIMIT", 50)  # per client address (0: no limit)
LOGIN_FAILURE_WINDOW_MINUTES = env_int("LOGIN_FAILURE_WINDOW_MINUTES", 15)
LOGIN_DELAY_SECONDS = env_int("LOGIN_DELAY_SECONDS", 30)
LOGIN_DELAY_MAX_SECONDS = env_int("LOGIN_DELAY_MAX_SECONDS", 900)
# Behind a proxy that sets it (e.g. "X-Forwarded-For"; its last address is used): off by default,
# since any client can send the header when no proxy replaces it.
LOGIN_CLIENT_ADDRESS_HEADER = env_request_header("LOGIN_CLIENT_ADDRESS_HEADER")

# --- Cache: CACHE_URL=redis://… is one cache for every web process (the queue's counters, throttles and
# the sign-in limits). Without it the counters stay in each process's memory, and the sign-in limits
# ("limits") go to a table of the database, so they hold across web processes on the embedded default too.
_cache_url = env_str("CACHE_URL")
if _cache_url and not _cache_url.startswith(("redis://", "rediss://")):
    raise ImproperlyConfigured(f"CACHE_URL={_cache_url!r} must be a redis:// URL (or unset: local memory)")
_redis_cache = {"BACKEND": "alignapp.cache.RedisCache", "LOCATION": _cache_url}  # one client per pool
CACHES = {
    "default": _redis_cache if _cache_url else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "limits": _redis_cache if _cache_url else {"BACKEND": "alignapp.cache.LockingDatabaseCache",
                                               "LOCATION": "alignapp_cache"},
}
# The OpenAPI schema (``GET /api/schema/``) for signed-in users; CI fuzzes every operation from it.
SPECTACULAR_SETTINGS = {
    "TITLE": "alignapp API",
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "COMPONENT_SPLIT_REQUEST": True,
}

# --- Celery: Redis in production, kombu's filesystem transport when no broker is configured.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", env_str("REDIS_URL", "filesystem://"))
CELERY_BROKER_DIR = Path(env_str("CELERY_BROKER_DIR", str(VAR_DIR / "broker")))
# How often a worker on the filesystem broker looks for a new message (kombu's default: every second).
CELERY_BROKER_POLL_MS = env_int("CELERY_BROKER_POLL_MS", 1000)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 6 * 3600)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 6 * 3600 - 60)
# Redis re-delivers an unacked task after visibility_timeout: a few times the longest chunk (a batch of
# document pairs, a mining chunk, a training epoch), not the longest job. A copy delivered while the
# first still runs is dropped by the claim (the work has a live heartbeat), so early is harmless.
CELERY_VISIBILITY_TIMEOUT = env_int("CELERY_VISIBILITY_TIMEOUT", 1800)
# Liveness: the worker running a job stamps ``heartbeat_at`` every WORKER_HEARTBEAT_SECONDS; RUNNING
# work with no heartbeat for WORKER_STALE_SECONDS lost its worker and is re-queued (resuming from its
# checkpoint) by any worker, beat or page that looks; the MAX_ATTEMPTS-th loss fails it instead.
WORKER_HEARTBEAT_SECONDS = env_int("WORKER_HEARTBEAT_SECONDS", 10)
WORKER_STALE_SECONDS = env_int("WORKER_STALE_SECONDS", 120)
MAX_ATTEMPTS = env_int("MAX_ATTEMPTS", 3)
if WORKER_HEARTBEAT_SECONDS < 1 or WORKER_STALE_SECONDS < 3 * WORKER_HEARTBEAT_SECONDS:
    raise ImproperlyConfigured("WORKER_STALE_SECONDS must be at least 3 × WORKER_HEARTBEAT_SECONDS (≥ 1 s), "
                               f"got {WORKER_STALE_SECONDS} and {WORKER_HEARTBEAT_SECONDS}")
if MAX_ATTEMPTS < 1:
    raise ImproperlyConfigured(f"MAX_ATTEMPTS must be at least 1, got {MAX_ATTEMPTS}")
# An alignment run is planned into chunks of document pairs of about this many sentences (both sides),
# each a Celery task any worker on the run's queue takes (services/alignment/run_chunks.py).
RUN_CHUNK_SENTENCES = env_int("RUN_CHUNK_SENTENCES", 2000)
if RUN_CHUNK_SENTENCES < 1:
    raise ImproperlyConfigured(f"RUN_CHUNK_SENTENCES must be at least 1, got {RUN_CHUNK_SENTENCES}")
# Sentence embeddings cached on disk per (encoder, normalised text), shared by the workers of a machine
# (or of every machine, on a shared volume); at most EMBEDDING_CACHE_MAX_ROWS rows per encoder, 0 = off.
EMBEDDING_CACHE_DIR = Path(env_str("EMBEDDING_CACHE_DIR", str(VAR_DIR / "embeddings")))
EMBEDDING_CACHE_MAX_ROWS = env_int("EMBEDDING_CACHE_MAX_ROWS", 2_000_000)

# --- Models
DEFAULT_ENCODER = env_str("ALIGNAPP_ENCODER", "")  # empty: the bundled all-MiniLM-L6-v2

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    # a refused request (403, 404, 400) is one line, not a traceback; server errors keep theirs
    "filters": {"client_errors_one_line": {"()": "alignapp.log_filters.ClientErrorsOneLine"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "INFO"},
                "django.request": {"filters": ["client_errors_one_line"]}},
}
