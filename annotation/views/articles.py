"""Article pages: the whole-article alignment, the paragraph-alignment correction and the
researchers' curation of two annotators' alignments.

Server-rendered shells; ``static/js/align_article.js``, ``static/js/paragraphs.js`` and
``static/js/curate.js`` load and save through ``views.api_articles`` (the paragraph page's proposals
through ``views.api_paragraph_proposals``, the curation through ``views.api_curation``).
"""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from ..models import Article
from ..permissions import can_research
from ..services.editing.paragraph_correction import applies_directly
from .common import researchers_only, visible_article


def _page(request: HttpRequest, article: Article, api_name: str, **extra) -> dict:
    query = {k: request.GET[k] for k in ("complex", "simple", "run") if request.GET.get(k, "").isdigit()}
    return {"article": article.pk, "api": reverse(api_name, args=[article.pk]), "query": query, **extra}


@login_required
def align(request: HttpRequest, pk: int) -> HttpResponse:
    article = visible_article(request, pk)
    page = _page(request, article, "article-alignment-api",
                 paragraphs=reverse("article-paragraphs", args=[article.pk]))
    return render(request, "articles/align.html", {"article": article, "page": page})


@login_required
def paragraphs(request: HttpRequest, pk: int) -> HttpResponse:
    article = visible_article(request, pk)
    is_researcher = can_research(request.user, article.project)
    direct = applies_directly(request.user, article.project)
    page = _page(request, article, "article-paragraphs-api", align=reverse("article-align", args=[article.pk]),
                 job_api=reverse("project-paragraph-job", args=[article.project_id]) if is_researcher else None,
                 proposals_api=reverse("project-paragraph-proposals", args=[article.project_id]),
                 is_researcher=is_researcher, applies_directly=direct)
    return render(request, "articles/paragraphs.html", {"article": article, "page": page, "is_researcher": is_researcher,
                                                        "applies_directly": direct})


@login_required
@researchers_only("only the project's researchers curate alignments", load=visible_article)
def curate(request: HttpRequest, article: Article) -> HttpResponse:
    """Researchers: curation of two annotators' alignments of a document pair (``?a=&b=`` usernames)."""
    page = _page(request, article, "article-curation-api", align=reverse("article-align", args=[article.pk]))
    page["query"].update({k: request.GET[k] for k in ("a", "b") if request.GET.get(k)})
    page["query"].pop("run", None)
    return render(request, "articles/curate.html", {"article": article, "page": page})
