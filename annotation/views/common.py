"""Helpers shared by the page views: the project (or article) of the URL, and the one declaration of
a researchers-only page."""
from __future__ import annotations

import functools
from collections.abc import Callable

from django.core.exceptions import PermissionDenied
from django.db.models import Model
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404

from ..models import Article, Project
from ..permissions import can_research, visible_projects


def visible_project(request: HttpRequest, pk: int) -> Project:
    """The project (with its label scheme), 404 unless the user is in it (or an admin)."""
    return get_object_or_404(visible_projects(request.user).select_related("label_scheme"), pk=pk)


def visible_article(request: HttpRequest, pk: int) -> Article:
    """The article (with its project and label scheme), 404 unless the user is in its project."""
    articles = Article.objects.filter(project__in=visible_projects(request.user)).select_related("project__label_scheme")
    return get_object_or_404(articles, pk=pk)


def researchers_only(why: str, load: Callable[[HttpRequest, int], Model] = visible_project):
    """Declares a page of a project's researchers (below ``login_required``): the view is called with
    the object of the URL's ``pk`` (``load``: the project by default) instead of ``pk``; people outside
    its project get 404 (as if it did not exist), its annotators 403 saying ``why``."""

    def declare(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @functools.wraps(view)
        def page(request: HttpRequest, pk: int, *args, **kwargs) -> HttpResponse:
            obj = load(request, pk)
            if not can_research(request.user, obj if isinstance(obj, Project) else obj.project):
                raise PermissionDenied(why)
            return view(request, obj, *args, **kwargs)
        return page
    return declare
