""""My labels": an annotator finds, checks and corrects their own labels of one project.

Server-rendered shell; ``static/js/my_labels.js`` lists, filters and searches through
``GET /api/labels/?mine=1&project=…``, edits with ``PATCH /api/labels/<id>/`` (the gate in
``services.labelling``, which keeps the old value in the history) and shows
``GET /api/labels/<id>/history/``.
"""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db.models import Exists, OuterRef
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.cache import never_cache

from ..models import Article, Label
from ..permissions import visible_projects
from ..services.review import qc, queue_items
from .article_choices import article_choices


@never_cache  # Back/Forward shows the labels as they are now, not as they were
@login_required
def my_labels(request: HttpRequest, pk: int) -> HttpResponse:
    project = get_object_or_404(visible_projects(request.user).select_related("label_scheme"), pk=pk)
    scheme = queue_items.scheme_payload(project.label_scheme)
    labelled = Label.objects.filter(annotator=request.user, pair__article=OuterRef("pk"))
    articles, more_articles = article_choices(Article.objects.filter(Exists(labelled), project=project))
    page = {
        "project": project.pk,
        "api": reverse("label-list"),
        "scheme": scheme,
        "editable": qc.exclusion_reason(request.user, project) is None,
    }
    context = {"project": project, "page": page, "scheme": scheme, "articles": articles, "more_articles": more_articles,
               "excluded": not page["editable"]}
    return render(request, "annotate/my_labels.html", context)
