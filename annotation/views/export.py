"""The export page (``static/js/export.js``): splits, a preview of the counts, export jobs and downloads."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from ..models import Export, Project, Status
from ..services.export import formats as export_formats
from ..services.export import splits
from ..services.export.options import DEFAULT_LABEL_POLICY, LABEL_POLICIES, LABEL_POLICY_HELP, PROVENANCES
from .common import researchers_only


@login_required
@researchers_only("only the project's researchers export")
def export_page(request: HttpRequest, project: Project) -> HttpResponse:
    policy = splits.project_policy(project)
    runs = project.runs.filter(status=Status.SUCCEEDED).select_related("model_version").order_by("-id")[:50]
    page = {
        "project": project.pk,
        "splits_api": reverse("export-splits", args=[project.pk]),
        "preview_api": reverse("export-preview", args=[project.pk]),
        "exports_api": reverse("export-list", args=[project.pk]),
    }
    context = {
        "project": project, "page": page, "policy": policy, "split_counts": splits.counts(project),
        "formats": export_formats.formats(), "provenances": PROVENANCES,
        "label_policies": [{"name": p, "help": LABEL_POLICY_HELP[p], "default": p == DEFAULT_LABEL_POLICY}
                           for p in LABEL_POLICIES],
        "scheme_values": project.label_scheme.values, "runs": runs,
        "model_versions": project.model_versions.order_by("-created_at")[:50],
        "exports": Export.objects.filter(project=project).select_related("job").order_by("-id")[:10],
    }
    return render(request, "export/export.html", context)
