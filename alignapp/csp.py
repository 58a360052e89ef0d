"""The Content-Security-Policy header on every response (Django 5.2 has no CSP support of its own).

The policy is ``settings.CONTENT_SECURITY_POLICY`` (directive → sources). Our pages satisfy it:
scripts and styles are static files, page data travels in ``json_script`` blocks (type
``application/json``, never executed), and no template has inline ``<script>``, ``style=`` or
``on…=`` handlers. DRF's browsable API (its HTML pages, for a browser that asks ``/api/…``)
writes inline styles: its pages alone also allow ``style-src 'unsafe-inline'`` — scripts stay
``'self'``. ``CSP_REPORT_ONLY=1`` sends ``Content-Security-Policy-Report-Only`` instead, so a
deployment can watch a changed page in the browser console without blocking anything.
"""
from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

HEADER = "Content-Security-Policy"
REPORT_ONLY_HEADER = "Content-Security-Policy-Report-Only"


def policy_text(policy: dict[str, str]) -> str:
    """``{"default-src": "'self'", "object-src": "'none'"}`` → ``"default-src 'self'; object-src 'none'"``."""
    return "; ".join(f"{directive} {sources}".strip() for directive, sources in policy.items())


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.header = REPORT_ONLY_HEADER if settings.CSP_REPORT_ONLY else HEADER
        policy = settings.CONTENT_SECURITY_POLICY
        self.value = policy_text(policy)
        style = policy.get("style-src", policy.get("default-src", "'self'"))
        self.browsable_api_value = policy_text({**policy, "style-src": f"{style} 'unsafe-inline'"})

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        # a view that needs another policy sets its own header
        if HEADER not in response.headers and REPORT_ONLY_HEADER not in response.headers:
            browsable = getattr(getattr(response, "accepted_renderer", None), "format", None) == "api"
            response.headers[self.header] = self.browsable_api_value if browsable else self.value
        return response
