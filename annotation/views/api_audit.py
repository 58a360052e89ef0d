"""``GET /api/projects/<id>/audit/``: the project's audit log (researchers and admins), newest first.

Filters ``action`` (a key of :data:`annotation.services.audit.ACTIONS` or a group such as ``run``)
and ``user`` (a username; ``-`` for actions nobody signed in did, e.g. management commands);
paginated with ``page`` (and ``page_size``, at most 500).
"""
from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics
from rest_framework.permissions import IsAuthenticated

from ..pagination import numbered_pages
from ..permissions import IsProjectResearcher
from ..serializers import AuditEventSerializer
from ..services import audit
from .mixins import ProjectFromUrl

AuditPagination = numbered_pages(50, 500)


@extend_schema_view(get=extend_schema(parameters=[
    OpenApiParameter("action", str, description="an action (run.start, member.role, ...) or a group (run, member, ...)"),
    OpenApiParameter("user", str, description="a username; - for actions of management commands"),
]))
class ProjectAuditView(ProjectFromUrl, generics.ListAPIView):
    """The project's audit log, newest first (researchers and admins): who did what, when, to what."""

    serializer_class = AuditEventSerializer
    permission_classes = [IsAuthenticated & IsProjectResearcher]
    pagination_class = AuditPagination

    def get_queryset(self):
        params = self.request.query_params
        return audit.events(project=self.get_project(), action=params.get("action", ""), actor=params.get("user", ""))
