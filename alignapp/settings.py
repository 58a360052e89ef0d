"""Django settings, all from the environment with safe defaults.

With no environment at all the application runs on the *embedded default*: SQLite in ``var/``,
a Celery broker on kombu's filesystem transport (no server), DEBUG on. Production sets
``ALIGNAPP_ENV=production``, which demands a real ``SECRET_KEY`` and turns DEBUG off.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from .env import env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("ALIGNAPP_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

PRODUCTION = env_str("ALIGNAPP_ENV", "development") == "production"

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if PRODUCTION:
        raise ImproperlyConfigured("SECRET_KEY must be set when ALIGNAPP_ENV=production")
    SECRET_KEY = "dev-only-insecure-key-not-for-production"  # noqa: S105 - development only

DEBUG = env_bool("DEBUG", default=not PRODUCTION)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", [] if PRODUCTION else ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "annotation",
    "workers",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
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
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 30, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
    )
    # A file, not :memory:, so a Celery worker process started by the tests sees the test database.
    # One file per test process, so parallel test runs never share it.
    _test_db = Path(tempfile.gettempdir()) / f"alignapp-test-{os.getpid()}.sqlite3"
    DATABASES["default"]["TEST"] = {"NAME": env_str("SQLITE_TEST_NAME", str(_test_db))}
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

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# --- Uploads / imports
MAX_UPLOAD_BYTES = env_int("MAX_UPLOAD_BYTES", 50 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_UPLOAD_BYTES
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": env_int("API_PAGE_SIZE", 100),
}

# --- Celery: Redis in production, kombu's filesystem transport when no broker is configured.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", env_str("REDIS_URL", "filesystem://"))
CELERY_BROKER_DIR = Path(env_str("CELERY_BROKER_DIR", str(VAR_DIR / "broker")))
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 6 * 3600)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 6 * 3600 - 60)
# Redis re-delivers unacked tasks after visibility_timeout: it must outlive the longest GPU job.
CELERY_VISIBILITY_TIMEOUT = env_int("CELERY_VISIBILITY_TIMEOUT", 7 * 3600)

# --- Models
DEFAULT_ENCODER = env_str("ALIGNAPP_ENCODER", "")  # empty: the bundled all-MiniLM-L6-v2

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "INFO"}},
}

if PRODUCTION:
    SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", True)
    CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", True)
