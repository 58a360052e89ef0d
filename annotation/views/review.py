"""Review pages for researchers: adjudication (``static/js/adjudicate.js``) and the dashboard
(``static/js/dashboard.js``); server-rendered, the JS modules do the live parts through the API."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.contrib.staticfiles import finders
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from ..label_schemes import scheme_kind
from ..models import Project
from ..services.review import adjudication, dashboard
from ..services.scoring.calibration import MAX_F1_OVER
from .common import researchers_only

# Built from npm by `make setup` (package.json → frontend/static/vendor/), loaded in this order.
CHART_SCRIPTS = ("vendor/chart.umd.min.js", "vendor/chartjs-chart-boxplot.umd.min.js")


#: Why the review pages refuse a project's annotators.
REVIEWERS_ONLY = "only the project's researchers review labels"


def _api(name: str, project: Project) -> str:
    return reverse(name, args=[project.pk])


@login_required
@researchers_only(REVIEWERS_ONLY)
def adjudicate(request: HttpRequest, project: Project) -> HttpResponse:
    scheme = project.label_scheme
    page = {
        "project": project.pk,
        "api": _api("review-adjudication", project),
        "gold_api": _api("review-gold", project),
        "scheme": {"kind": scheme.kind, "values": scheme.values},
        "show_score": adjudication.shows_score(project),
    }
    context = {"project": project, "page": page, "scheme": scheme, "mode": adjudication.queue_mode(project),
               "gold": adjudication.gold_counts(project)}
    return render(request, "review/adjudicate.html", context)


def _agreement_rows(result: dict) -> dict:
    """The agreement summaries as titled rows for the template."""
    kind = scheme_kind(result["kind"])
    rows = kind.agreement_rows(result)
    return {"kind": result["kind"], "ordinal": kind.ordinal, "rows": rows, "pairwise": rows[0][1]["cohen"] if rows else [],
            "links": result.get("links", [])}


@login_required
@researchers_only(REVIEWERS_ONLY)
def dashboard_page(request: HttpRequest, project: Project) -> HttpResponse:
    charts = all(finders.find(path) for path in CHART_SCRIPTS)
    page = {
        "project": project.pk,
        "distribution_api": _api("review-score-distribution", project),
        "calibrate_api": _api("review-calibrate", project),
        "dashboard_api": _api("review-dashboard", project),
    }
    figures = dashboard.page_aggregates(project)  # kept per state of the project's data (review_state.kept)
    page["computing"] = figures["computing"]  # a big project's first figures: dashboard.js polls until they are kept
    context = {
        "project": project,
        "page": page,
        "charts": charts,
        "chart_scripts": CHART_SCRIPTS if charts else (),
        "progress": figures["progress"],
        "annotators": figures["annotators"],
        "labels": figures["labels"],
        "agreement": _agreement_rows(figures["agreement"]) if figures["agreement"] is not None else None,
        "figures_as_of": figures["as_of"],
        "figures_updating": figures["updating"],
        "figures_computing": figures["computing"],
        "runs": project.runs.order_by("-created_at")[:20],
        "thresholds": (project.config or {}).get("thresholds"),
        "max_f1_over": MAX_F1_OVER,
        **dashboard.language_tool_status(project),
    }
    return render(request, "review/dashboard.html", context)
