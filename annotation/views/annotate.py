"""The labelling page: server-rendered shell; ``static/js/annotate.js`` drives the queue API."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.cache import never_cache

from ..permissions import can_research, visible_projects
from ..services.projects import guidelines
from ..services.review import annotator, queue_items, queue_progress


@never_cache  # Cache-Control: no-store (and friends): Back/Forward reloads the current item
@login_required
def annotate(request: HttpRequest, pk: int) -> HttpResponse:
    project = get_object_or_404(visible_projects(request.user).select_related("label_scheme"), pk=pk)
    actor = annotator.of(request.user, project)  # the same context the queue API loads
    base = reverse("queue-next", args=[project.pk]).rsplit("next/", 1)[0]
    page = {
        "project": project.pk,
        "api": base,
        "scheme": queue_items.scheme_payload(project.label_scheme),
        "min_seconds": actor.qc_config.min_seconds,
        # shown on the first visit and again whenever they change (static/js/annotate.js remembers the version)
        "guidelines_version": guidelines.version(text := guidelines.project_guidelines(project)),
    }
    context = {"project": project, "page": page, "scheme": page["scheme"], "guidelines_html": guidelines.render(text),
               "excluded": actor.exclusion,
               "review": queue_progress.changes_review(request.user, project), "researcher": can_research(request.user, project)}
    return render(request, "annotate/label.html", context)
