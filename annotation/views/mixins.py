"""Helpers shared by the API views: the project in the URL or query, scoped querysets, query
parameters parsed into a 400 naming the parameter (the only ``except`` clauses of the API views
besides the exception handler: they turn a parse error into DRF's field error)."""
from __future__ import annotations

import datetime
from functools import cached_property

from django.shortcuts import get_object_or_404
from django.utils.dateparse import parse_date, parse_datetime
from rest_framework.exceptions import ValidationError

from ..models import Project
from ..permissions import visible_projects
from ..services.background import liveness
from ..services.review.label_input import clean_text
from ..validation import InputError, parse_id


class ReapsLostWork:
    """A viewset of background work (runs, jobs): listing or reading it first puts the work whose
    worker was lost back in the queue (someone looking is when it is noticed)."""

    def list(self, request, *args, **kwargs):
        liveness.maybe_reap()
        return super().list(request, *args, **kwargs)

    def retrieve(self, request, *args, **kwargs):
        liveness.maybe_reap()
        return super().retrieve(request, *args, **kwargs)


class ProjectFromUrl:
    """Views under ``/api/projects/<project_pk>/...``: the project (with its label scheme, which most
    of them read), 404 if the user can't see it.

    Looked up once per request: the permission check calls :meth:`get_project`, which keeps the project as
    ``self.project``; a handler reads that attribute (no second call), and reading it before any check looks it up."""

    @cached_property
    def project(self) -> Project:
        return self.get_project()

    def get_project(self) -> Project:
        if "project" not in self.__dict__:  # the cached_property's slot: later reads of self.project are plain
            projects = visible_projects(self.request.user).select_related("label_scheme")
            self.__dict__["project"] = get_object_or_404(projects, pk=self.kwargs["project_pk"])
        return self.__dict__["project"]


def int_param(request, name: str) -> int | None:
    """The query parameter as an integer that fits a 64-bit id (None when absent); 400 otherwise."""
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return None
    try:
        return parse_id(name, raw)
    except InputError as exc:
        raise ValidationError({name: str(exc).removeprefix(f"{name}: ")}) from None


def text_param(request, name: str, limit: int) -> str:
    """The query parameter as text the database stores faithfully, at most ``limit`` characters; 400 otherwise."""
    try:
        return clean_text(name, request.query_params.get(name), limit)
    except ValueError as exc:
        raise ValidationError({name: str(exc)}) from exc


def date_param(request, name: str, *, end: bool = False) -> datetime.datetime | None:
    """The query parameter as an aware date-time (a bare date: its start, or with ``end`` its end); 400 otherwise."""
    raw = request.query_params.get(name)
    if not raw:
        return None
    parsed = parse_datetime(raw) if "T" in raw or " " in raw else None
    if parsed is None:
        try:
            day = parse_date(raw)
        except ValueError:  # well formed, no such day (2024-02-30)
            day = None
        if day is None:
            raise ValidationError({name: f"must be a date (YYYY-MM-DD) or date-time, got {raw[:40]!r}"})
        parsed = datetime.datetime.combine(day, datetime.time.max if end else datetime.time.min)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.UTC)
    return parsed
