"""Settings come from the environment; bad values fail loudly at start-up."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from alignapp.env import env_bool, env_int, env_list, env_proxy_header

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("raw,expected", [("1", True), ("yes", True), ("ON", True), ("0", False), ("false", False), ("", False)])
def test_env_bool_reads_the_usual_spellings(monkeypatch, raw, expected):
    monkeypatch.setenv("X_FLAG", raw)
    assert env_bool("X_FLAG") is expected


def test_env_helpers_reject_bad_values_naming_the_variable(monkeypatch):
    monkeypatch.setenv("X_FLAG", "maybe")
    monkeypatch.setenv("X_NUM", "ten")
    with pytest.raises(ImproperlyConfigured, match="X_FLAG"):
        env_bool("X_FLAG")
    with pytest.raises(ImproperlyConfigured, match="X_NUM"):
        env_int("X_NUM", 1)


def test_env_list_splits_on_commas(monkeypatch):
    monkeypatch.setenv("X_HOSTS", "a.org, b.org,,")
    assert env_list("X_HOSTS", []) == ["a.org", "b.org"]


GOOD_KEY = "k" * 10 + "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"  # 56 characters, not a known key


def _settings_in_subprocess(env: dict[str, str], *names: str, var_dir: Path | None = None) -> subprocess.CompletedProcess:
    """Start Django with exactly ``env`` (on top of a clean environment) and print the ``names`` settings."""
    names = names or ("DEBUG",)
    code = ("import django; django.setup(); from django.conf import settings; "
            f"print(repr([getattr(settings, n) for n in {list(names)!r}]))")
    drop = ("SECRET_KEY", "DATABASE_URL", "ALIGNAPP_ENV", "DEBUG", "ALIGNAPP_VAR_DIR", "SECURE_SSL_REDIRECT",
            "SECURE_HSTS_SECONDS", "SECURE_PROXY_SSL_HEADER", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "CACHE_URL")
    clean = {k: v for k, v in os.environ.items() if k not in drop}
    if var_dir is not None:
        clean["ALIGNAPP_VAR_DIR"] = str(var_dir)
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={**clean, "DJANGO_SETTINGS_MODULE": "alignapp.settings", **env})


def _values(result: subprocess.CompletedProcess) -> list:
    import ast

    assert result.returncode == 0, result.stderr[-2000:]
    return ast.literal_eval(result.stdout.strip().splitlines()[-1])


def test_production_refuses_to_start_without_a_secret_key(tmp_path):
    result = _settings_in_subprocess({"ALIGNAPP_ENV": "production"}, var_dir=tmp_path)
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr


@pytest.mark.parametrize("key", ["s3cret", "x" * 60, "dev-only-insecure-key-not-for-production",
                                 "django-insecure-" + "a1b2c3d4e5" * 5, GOOD_KEY[:49]])
def test_production_refuses_a_short_weak_or_known_secret_key(tmp_path, key):
    result = _settings_in_subprocess({"ALIGNAPP_ENV": "production", "SECRET_KEY": key}, var_dir=tmp_path)
    assert result.returncode != 0 and "SECRET_KEY is too short or a known key" in result.stderr


def test_production_turns_debug_off_refuses_debug_and_sets_secure_cookies(tmp_path):
    env = {"ALIGNAPP_ENV": "production", "SECRET_KEY": GOOD_KEY}
    assert _values(_settings_in_subprocess(env, "DEBUG", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE",
                                           var_dir=tmp_path)) == [False, True, True]
    refused = _settings_in_subprocess({**env, "DEBUG": "1"}, var_dir=tmp_path)
    assert refused.returncode != 0 and "DEBUG must be off" in refused.stderr


def test_debug_is_on_only_when_asked_for(tmp_path):
    assert _values(_settings_in_subprocess({}, "DEBUG", var_dir=tmp_path)) == [False]
    assert _values(_settings_in_subprocess({"ALIGNAPP_ENV": "test"}, "DEBUG", var_dir=tmp_path)) == [False]
    assert _values(_settings_in_subprocess({"ALIGNAPP_ENV": "development"}, "DEBUG", var_dir=tmp_path)) == [True]
    assert _values(_settings_in_subprocess({"DEBUG": "1"}, "DEBUG", var_dir=tmp_path)) == [True]


def test_an_unknown_environment_name_stops_the_start_naming_the_valid_ones(tmp_path):
    result = _settings_in_subprocess({"ALIGNAPP_ENV": "prod"}, var_dir=tmp_path)
    assert result.returncode != 0
    assert "ALIGNAPP_ENV='prod' is not valid; use one of: development, production, test" in result.stderr


def test_the_default_is_embedded_sqlite_with_a_key_made_for_this_installation(tmp_path):
    first = _values(_settings_in_subprocess({}, "SECRET_KEY", "DATABASES", var_dir=tmp_path))
    key, databases = first
    assert databases["default"]["ENGINE"] == "django.db.backends.sqlite3"
    assert len(key) >= 50 and key != "dev-only-insecure-key-not-for-production"
    stored = tmp_path / "secret_key"
    assert stored.read_text().strip() == key and stat.S_IMODE(stored.stat().st_mode) == 0o600
    # every later process (web workers, Celery) reads the same key; another installation gets another
    assert _values(_settings_in_subprocess({}, "SECRET_KEY", var_dir=tmp_path)) == [key]
    other = tmp_path / "other"
    assert _values(_settings_in_subprocess({}, "SECRET_KEY", var_dir=other)) != [key]


def test_concurrent_starts_agree_on_one_key(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from alignapp.env import local_secret_key

    path = tmp_path / "secret_key"
    with ThreadPoolExecutor(8) as pool:
        keys = set(pool.map(lambda _: local_secret_key(path), range(32)))
    assert keys == {path.read_text().strip()}
    assert [p.name for p in tmp_path.iterdir()] == ["secret_key"]  # no temporary file left behind


def test_https_settings_come_from_the_environment(tmp_path):
    env = {"SECURE_SSL_REDIRECT": "1", "SECURE_HSTS_SECONDS": "31536000",
           "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto=https", "SESSION_COOKIE_SECURE": "yes"}
    names = ("SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS", "SECURE_PROXY_SSL_HEADER", "SESSION_COOKIE_SECURE",
             "CSRF_COOKIE_SECURE")
    assert _values(_settings_in_subprocess(env, *names, var_dir=tmp_path)) == [
        True, 31536000, ("HTTP_X_FORWARDED_PROTO", "https"), True, False]
    assert _values(_settings_in_subprocess({}, *names, var_dir=tmp_path)) == [False, 0, None, False, False]


@pytest.mark.parametrize("raw,expected", [("X-Forwarded-Proto=https", ("HTTP_X_FORWARDED_PROTO", "https")),
                                          ("HTTP_X_FORWARDED_SSL = on", ("HTTP_X_FORWARDED_SSL", "on"))])
def test_the_proxy_header_is_read_in_either_spelling(monkeypatch, raw, expected):
    monkeypatch.setenv("X_PROXY", raw)
    assert env_proxy_header("X_PROXY") == expected


@pytest.mark.parametrize("raw", ["X-Forwarded-Proto", "=https", "X-Forwarded-Proto="])
def test_a_malformed_proxy_header_is_refused(monkeypatch, raw):
    monkeypatch.setenv("X_PROXY", raw)
    with pytest.raises(ImproperlyConfigured, match="X-Forwarded-Proto=https"):
        env_proxy_header("X_PROXY")


def test_a_cache_url_other_than_redis_is_refused(tmp_path):
    result = _settings_in_subprocess({"CACHE_URL": "memcached://x"}, var_dir=tmp_path)
    assert result.returncode != 0 and "must be a redis:// URL" in result.stderr


def test_a_redis_cache_url_selects_the_cache_with_one_client_per_pool(tmp_path):
    result = _settings_in_subprocess({"CACHE_URL": "redis://127.0.0.1:6379/9"}, "CACHES", var_dir=tmp_path)
    caches = _values(result)[0]
    assert {caches["default"]["BACKEND"], caches["limits"]["BACKEND"]} == {"alignapp.cache.RedisCache"}


def test_the_prepare_threshold_of_postgresql_comes_from_the_environment_and_0_turns_it_off(tmp_path):
    """The loop's statements are prepared after DB_PREPARE_THRESHOLD runs (2 by default); the connection's own
    option stays off, so psycopg never counts (and keeps the text of) Django's other queries."""
    url = {"DATABASE_URL": "postgres://u:p@127.0.0.1:5432/x"}
    for raw, expected in ((None, 2), ("2", 2), ("5", 5), ("0", 0)):
        env = {**url, **({"DB_PREPARE_THRESHOLD": raw} if raw is not None else {})}
        databases, threshold = _values(_settings_in_subprocess(env, "DATABASES", "DB_PREPARE_THRESHOLD",
                                                               var_dir=tmp_path))
        assert databases["default"]["OPTIONS"]["prepare_threshold"] is None and threshold == expected
