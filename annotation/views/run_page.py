"""A run's page (``static/js/run.js``): what it was asked to do, how it went, and the pairs it produced."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse

from ..models import AlignmentRun, Prediction
from ..permissions import can_research, sees_predictions, visible_projects
from ..services.alignment.run_chunks import chunk_summary
from ..services.background import jobs, liveness
from ..services.training.run_scores import page_scores
from .article_choices import article_choices


@login_required
def run_page(request: HttpRequest, pk: int, project_pk: int | None = None) -> HttpResponse:
    liveness.maybe_reap()  # a run whose worker was lost is back in the queue before it is shown
    run = get_object_or_404(AlignmentRun.objects.filter(project__in=visible_projects(request.user))
                            .select_related("project", "model_version", "created_by"), pk=pk)
    if project_pk is not None and run.project_id != project_pk:
        raise Http404("no such run in this project")
    if not sees_predictions(request.user, run.project_id):
        raise PermissionDenied("a run's pairs are hidden from annotators during blind annotation")
    researcher = can_research(request.user, run.project)
    duration = (run.finished_at - run.started_at).total_seconds() if run.started_at and run.finished_at else None
    # a semi-join per article (stops at its first predicted pair), not DISTINCT over the run's every prediction
    predicted = Prediction.objects.filter(run=run, pair__article=OuterRef("pk"))
    articles, more_articles = article_choices(run.project.articles.filter(Exists(predicted)))
    page = {"run": run.pk, "project": run.project_id, "researcher": researcher,
            "run_api": reverse("run-detail", args=[run.pk]), "pairs_api": reverse("pair-list"),
            "compare_page": reverse("project-run-compare", args=[run.project_id]),
            "project_page": reverse("project-detail", args=[run.project_id])}
    scores = page_scores(run)
    page["scores_computing"] = bool(scores["computing"])  # a big project's first scores: run.js polls until kept
    others = run.project.runs.exclude(pk=run.pk).order_by("-created_at").values("pk", "method", "status")[:50]
    context = {"run": run, "project": run.project, "researcher": researcher, "duration": duration,
               "articles": articles, "more_articles": more_articles, "page": page, "others": others,
               "retryable": jobs.can_retry(run), "worker_lost": liveness.is_lost(run), "chunks": chunk_summary(run.pk),
               "scores": scores}
    return render(request, "runs/run.html", context)
