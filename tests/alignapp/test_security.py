"""Safe defaults over HTTP: the Content-Security-Policy header, HTTPS settings, one-line 403 logs,
error reports that hide passwords in URLs, and no demo accounts in production."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import RequestFactory

from alignapp.csp import policy_text
from alignapp.log_filters import ClientErrorsOneLine, ExceptionReporterFilter

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("path", ["/login/", "/api/projects/", "/healthz", "/no-such-page/"])
def test_every_answer_carries_the_content_security_policy(client, db, path):
    header = client.get(path)["Content-Security-Policy"]
    assert "default-src 'self'" in header and "script-src 'self'" in header and "style-src 'self'" in header
    assert "'unsafe-inline'" not in header and "object-src 'none'" in header and "frame-ancestors 'none'" in header


def test_only_the_browsable_api_may_use_inline_styles_and_scripts_stay_our_own(client, users):
    client.force_login(users["anna"])
    html = client.get("/api/projects/", HTTP_ACCEPT="text/html")["Content-Security-Policy"]
    assert "style-src 'self' 'unsafe-inline'" in html and "script-src 'self';" in html
    as_json = client.get("/api/projects/", HTTP_ACCEPT="application/json")["Content-Security-Policy"]
    assert "unsafe-inline" not in as_json


def test_report_only_mode_sends_the_report_only_header(client, db, settings):
    settings.CSP_REPORT_ONLY = True
    response = client.get("/login/")
    assert "Content-Security-Policy" not in response and "default-src 'self'" in response["Content-Security-Policy-Report-Only"]


def test_the_policy_is_written_directive_by_directive():
    assert policy_text({"default-src": "'self'", "object-src": "'none'"}) == "default-src 'self'; object-src 'none'"


def test_hsts_and_the_https_redirect_follow_the_settings(client, db, settings):
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 3600
    plain = client.get("/login/")
    assert plain.status_code == 301 and plain["Location"] == "https://testserver/login/"
    assert client.get("/healthz").status_code == 200  # the container's health check stays on plain HTTP
    secure = client.get("/login/", secure=True)
    assert secure.status_code == 200 and secure["Strict-Transport-Security"] == "max-age=3600"


def test_behind_a_tls_proxy_its_header_makes_the_request_secure(client, db, settings):
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    assert client.get("/login/", HTTP_X_FORWARDED_PROTO="https").status_code == 200
    assert client.get("/login/", HTTP_X_FORWARDED_PROTO="http").status_code == 301


def test_a_refused_page_is_logged_in_one_line_without_a_traceback(client, users, project, caplog):
    client.force_login(users["anna"])
    with caplog.at_level(logging.WARNING, logger="django.request"):
        assert client.get(f"/projects/{project.pk}/settings/").status_code == 403
    records = [r for r in caplog.records if r.name == "django.request"]
    assert len(records) == 1
    assert records[0].exc_info is None and records[0].exc_text is None
    message = records[0].getMessage()
    assert message.startswith("Forbidden (Permission denied): /projects/") and "researchers" in message
    assert "Traceback" not in caplog.text


def test_server_errors_keep_their_traceback():
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        record = logging.LogRecord("django.request", logging.ERROR, __file__, 1, "Internal Server Error: %s",
                                   ("/x",), sys.exc_info())
    record.status_code = 500
    assert ClientErrorsOneLine().filter(record) and record.exc_info is not None


def test_error_reports_hide_urls_that_carry_passwords(settings):
    settings.DEBUG = True
    reporter = ExceptionReporterFilter()
    request = RequestFactory().get("/", DATABASE_URL="postgres://alignapp:hunter2@db/alignapp")
    assert "hunter2" not in str(reporter.get_safe_request_meta(request))
    assert "hunter2" not in str(reporter.cleanse_setting("CELERY_BROKER_URL", "redis://:hunter2@redis:6379/0"))


def test_demo_setup_refuses_in_production(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DEBUG")}
    env.update(ALIGNAPP_ENV="production", SECRET_KEY="k" * 10 + "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ",
               ALIGNAPP_VAR_DIR=str(tmp_path), DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    result = subprocess.run([sys.executable, "manage.py", "demo_setup"], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode != 0
    assert "refuses to run with ALIGNAPP_ENV=production" in result.stderr and "admin/admin" in result.stderr
    assert "demo accounts" not in result.stdout
