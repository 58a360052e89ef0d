"""Roles as small composable DRF permission classes (combine with ``&`` / ``|`` in views).

* admin — ``is_staff``: everything, everywhere.
* researcher — a project membership with role ``researcher``: import, run, export, manage the
  project. Members of the ``researchers`` group may also create new projects.
* annotator — a membership with role ``annotator``: sees and labels that project's items only.
"""
from __future__ import annotations

from django.db.models import QuerySet
from rest_framework.permissions import SAFE_METHODS, BasePermission

from .models import Membership, Project, Role

RESEARCHERS_GROUP = "researchers"


def is_admin(user) -> bool:
    return bool(user and user.is_authenticated and user.is_staff)


def role_in(user, project: Project | int) -> str | None:
    """The user's role in the project ('researcher', 'annotator'), 'admin' for staff, else None."""
    if not (user and user.is_authenticated):
        return None
    if is_admin(user):
        return "admin"
    project_id = project if isinstance(project, int) else project.pk
    return Membership.objects.filter(project_id=project_id, user=user).values_list("role", flat=True).first()


def can_research(user, project: Project | int) -> bool:
    return role_in(user, project) in ("admin", Role.RESEARCHER)


def can_annotate(user, project: Project | int) -> bool:
    return role_in(user, project) is not None


def can_create_projects(user) -> bool:
    return is_admin(user) or bool(user and user.is_authenticated and user.groups.filter(name=RESEARCHERS_GROUP).exists())


def visible_projects(user) -> QuerySet[Project]:
    if is_admin(user):
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user).distinct()


def researched_projects(user) -> QuerySet[Project]:
    if is_admin(user):
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user, memberships__role=Role.RESEARCHER).distinct()


class IsSiteAdmin(BasePermission):
    def has_permission(self, request, view) -> bool:
        return is_admin(request.user)


class IsReadOnly(BasePermission):
    def has_permission(self, request, view) -> bool:
        return request.method in SAFE_METHODS


class IsProjectMember(BasePermission):
    """Object-level: the object's project (``obj.project`` or ``view.get_project()``) has the user."""

    def has_permission(self, request, view) -> bool:
        project = getattr(view, "get_project", lambda: None)()
        return project is None or can_annotate(request.user, project)


class IsProjectResearcher(BasePermission):
    def has_permission(self, request, view) -> bool:
        project = getattr(view, "get_project", lambda: None)()
        return project is None or can_research(request.user, project)


class CanCreateProjects(BasePermission):
    """Guards the ``create`` action of a viewset only."""

    def has_permission(self, request, view) -> bool:
        return getattr(view, "action", None) != "create" or can_create_projects(request.user)
