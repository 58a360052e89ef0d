"""Training pages: the model registry (``static/js/models.js``) and run comparison
(``static/js/compare.js``): server-rendered shells, the live parts go through the API."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.contrib.staticfiles import finders
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from ..models import Project
from ..services.training import current, metrics
from ..services.training import request as train_request
from .common import researchers_only
from .review import CHART_SCRIPTS, REVIEWERS_ONLY


@login_required
@researchers_only(REVIEWERS_ONLY)
def models_page(request: HttpRequest, project: Project) -> HttpResponse:
    charts = all(finders.find(path) for path in CHART_SCRIPTS[:1])
    # kept per state of the data; a big project's is built by a job while the page says so
    data = current.page_summary(project, user=request.user)
    page = {
        "project": project.pk,
        "versions_api": reverse("project-model-versions", args=[project.pk]),
        "train_api": reverse("project-train", args=[project.pk]),
        "jobs_api": reverse("job-list") + f"?project={project.pk}",
        "compare_page": reverse("project-run-compare", args=[project.pk]),
        "runs_api": reverse("run-list") + f"?project={project.pk}",
    }
    context = {"project": project, "page": page, "data": data.snapshot if data else {},
               "refusal": data.refusal if data else None, "computing": data is None,
               "summary_as_of": data.as_of if data else None, "summary_updating": bool(data and data.updating),
               "train_options": train_request.form_fields(), "seed": train_request.seed_field(),
               "complete": metrics.complete_articles(project),
               "min_articles": metrics.min_trusted_articles(), "chart_scripts": CHART_SCRIPTS[:1] if charts else ()}
    return render(request, "training/models.html", context)


@login_required
@researchers_only(REVIEWERS_ONLY)
def compare_page(request: HttpRequest, project: Project) -> HttpResponse:
    runs = list(project.runs.order_by("-created_at", "-pk").values("pk", "method", "status", "model_version__name")[:50])
    page = {"project": project.pk, "compare_api": reverse("run-compare"),
            "review_api": reverse("project-review-changes", args=[project.pk]),
            "queue_changes": (project.config or {}).get("queue_changes"),
            "old": request.GET.get("old", ""), "new": request.GET.get("new", "")}
    return render(request, "review/compare.html", {"project": project, "page": page, "runs": runs})
