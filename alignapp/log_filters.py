"""Logging and error-report filters referenced from settings (``LOGGING``, ``DEFAULT_EXCEPTION_REPORTER_FILTER``)."""
from __future__ import annotations

import logging
import re

from django.views.debug import SafeExceptionReporterFilter


class ClientErrorsOneLine(logging.Filter):
    """Drop the traceback from ``django.request`` records of 4xx answers.

    Django logs a view's ``PermissionDenied`` (and bad request bodies) with the exception's
    traceback: every refused page view would write a dozen lines that say nothing but "refused".
    The one-line message (status, path and reason) stays; 5xx records keep their traceback.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and 400 <= status < 500 and record.exc_info:
            reason = str(record.exc_info[1] or "")
            if reason and isinstance(record.args, tuple):
                record.msg = f"{record.msg} (%s)"
                record.args = (*record.args, reason[:200])
            record.exc_info = None
            record.exc_text = None
        return True


class ExceptionReporterFilter(SafeExceptionReporterFilter):
    """Django's error reports (the DEBUG page, error emails) hide settings and environment values
    whose names look secret; ``…_URL`` names join them, since a ``DATABASE_URL`` or broker URL
    carries its password (``postgres://user:password@host/db``)."""

    hidden_settings = re.compile("API|AUTH|TOKEN|KEY|SECRET|PASS|SIGNATURE|HTTP_COOKIE|URL|DSN", flags=re.I)
