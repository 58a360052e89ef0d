"""Settings come from the environment; bad values fail loudly at start-up."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from alignapp.env import env_bool, env_int, env_list

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


def _settings_in_subprocess(env: dict[str, str]) -> subprocess.CompletedProcess:
    code = "import django; django.setup(); from django.conf import settings; print(settings.DEBUG, settings.DATABASES['default']['ENGINE'])"
    clean = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DATABASE_URL", "ALIGNAPP_ENV", "DEBUG")}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={**clean, "DJANGO_SETTINGS_MODULE": "alignapp.settings", **env})


def test_production_refuses_to_start_without_a_secret_key():
    result = _settings_in_subprocess({"ALIGNAPP_ENV": "production"})
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr


def test_production_turns_debug_off_and_the_default_is_embedded_sqlite():
    assert _settings_in_subprocess({"ALIGNAPP_ENV": "production", "SECRET_KEY": "s3cret"}).stdout.split()[0] == "False"
    assert _settings_in_subprocess({}).stdout.split() == ["True", "django.db.backends.sqlite3"]
