"""The audit log pages: a project's log (its researchers and admins) and the site-wide log (admins).

A table of who did what, when, newest first, 50 to a page, filtered by action (or action group) and
by user; the events are written by the services (:mod:`annotation.services.audit`).
"""
from __future__ import annotations

from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from ..models import AuditEvent, Project
from ..permissions import is_admin
from ..services import audit
from .common import researchers_only
from .forms import refuses_with

PAGE_SIZE = 50


def _render(request: HttpRequest, project: Project | None, error: Exception | None = None) -> HttpResponse:
    """The log, filtered by the query's ``action`` and ``user``; a refused filter (``error``): none of it."""
    action, actor = request.GET.get("action", "").strip(), request.GET.get("user", "").strip()
    events = AuditEvent.objects.none() if error is not None else audit.events(project=project, action=action,
                                                                               actor=actor)
    page = Paginator(events, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "project": project,
        "rows": [(e, audit.ACTIONS.get(e.action, e.action), audit.summary(e.details)) for e in page],
        "page": page,
        "action": action, "actor": actor, "error": str(error or ""),
        "actions": sorted(audit.ACTIONS.items()),
        "actors": audit.actors(project),
        "filters": urlencode({k: v for k, v in (("action", action), ("user", actor)) if v}),
    }
    return render(request, "audit/audit.html", context, status=getattr(error, "status", 200))


@login_required
@researchers_only("only the project's researchers and admins read its audit log")
@refuses_with(lambda request, error, project: _render(request, project, error))
def project_audit(request: HttpRequest, project: Project) -> HttpResponse:
    """404 for people outside the project, 403 for its annotators."""
    return _render(request, project)


@login_required
@refuses_with(lambda request, error: _render(request, None, error))
def site_audit(request: HttpRequest) -> HttpResponse:
    if not is_admin(request.user):
        raise PermissionDenied("only site admins read the site-wide audit log")
    return _render(request, None)
