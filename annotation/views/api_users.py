"""``GET /api/users/?q=<prefix>``: active users whose username starts with the prefix, for researchers and
admins picking a project member (at most ``services.people.SEARCH_LIMIT``)."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from ..schema import texts
from ..services.projects import people


class CanSearchUsers(BasePermission):
    message = "Only researchers and admins look people up."

    def has_permission(self, request, view) -> bool:
        return people.can_search_users(request.user)


class UserSearchView(APIView):
    permission_classes = [IsAuthenticated & CanSearchUsers]

    @extend_schema(parameters=texts("q"))
    def get(self, request):
        users = people.search_users(request.query_params.get("q", ""))
        return Response({"results": [{"id": u.pk, "username": u.username} for u in users],
                         "limit": people.SEARCH_LIMIT})
