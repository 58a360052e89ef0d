"""Helpers shared by the API views: the project in the URL or query, scoped querysets."""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from rest_framework.exceptions import ValidationError

from ..models import Project
from ..permissions import visible_projects
from ..validation import InputError, parse_id


class ProjectFromUrl:
    """Views under ``/api/projects/<project_pk>/...``: the project (with its label scheme, which most
    of them read), 404 if the user can't see it."""

    def get_project(self) -> Project:
        if not hasattr(self, "_project"):
            projects = visible_projects(self.request.user).select_related("label_scheme")
            self._project = get_object_or_404(projects, pk=self.kwargs["project_pk"])
        return self._project


def int_param(request, name: str) -> int | None:
    """The query parameter as an integer that fits a 64-bit id (None when absent); 400 otherwise."""
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return None
    try:
        return parse_id(name, raw)
    except InputError as exc:
        raise ValidationError({name: str(exc).removeprefix(f"{name}: ")}) from None
