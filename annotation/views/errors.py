"""The server-error page: rendered without a request context (the failure may be in a context processor
or the session), falling back to plain text if even the layout cannot render."""
from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse, HttpResponseServerError
from django.template import loader

logger = logging.getLogger(__name__)


def server_error(request: HttpRequest, template_name: str = "500.html") -> HttpResponse:
    try:
        return HttpResponseServerError(loader.get_template(template_name).render())
    except Exception:  # the page that reports errors must not raise one itself
        logger.exception("could not render %s", template_name)
        return HttpResponseServerError("Server error. Please try again in a moment.", content_type="text/plain")
