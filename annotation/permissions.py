"""Roles as small composable DRF permission classes (combine with ``&`` / ``|`` in views).

* admin — ``is_staff``: everything, everywhere.
* researcher — a project membership with role ``researcher``: import, run, export, manage the
  project. Members of the ``researchers`` group may also create new projects.
* annotator — a membership with role ``annotator``: sees and labels that project's items only;
  blind (the default) unless the project shows predictions: see :func:`blind_projects`.

Someone outside a project gets 404 for everything in it, as if it did not exist; a member
without the role an action needs gets 403.
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


def annotator_only_projects(user) -> set[int]:
    """Ids of the projects where the user annotates and does not research (none for admins): there
    the hidden test questions must not stand out (no ``origin``, no ``is_test_question``)."""
    if not (user and user.is_authenticated) or is_admin(user):
        return set()
    return set(Membership.objects.filter(user=user).exclude(role=Role.RESEARCHER).values_list("project_id", flat=True))


def blind_projects(user) -> set[int]:
    """Ids of the projects the user annotates blind: annotator only, and the project's config does not
    say ``"show_predictions": true``. There they see no model output: no scores, predicted labels or
    attributes, no run's pairs, and only the pairs they were given to label."""
    ids = annotator_only_projects(user)
    if not ids:
        return set()
    return {pk for pk, config in Project.objects.filter(pk__in=ids).values_list("pk", "config")
            if not (config or {}).get("show_predictions")}


def sees_predictions(user, project: Project | int) -> bool:
    """Whether the user may see the model's output in this project (see :func:`blind_projects`)."""
    project_id = project if isinstance(project, int) else project.pk
    return project_id not in blind_projects(user)


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

    @staticmethod
    def holds(request, view) -> bool:
        """Whether the user researches the view's project (for a view whose answer depends on it)."""
        return can_research(request.user, view.get_project())


class IsResearcherOrProposalAuthor(BasePermission):
    """The user researches the project of the view's paragraph proposal (``view.get_proposal()``) or made it."""

    message = "only researchers and its author see a proposal"

    def has_permission(self, request, view) -> bool:
        return view.get_proposal().proposed_by_id == request.user.pk or IsProjectResearcher.holds(request, view)


class IsResearcherForWrites(IsProjectResearcher):
    """Object-level: anyone who sees the project reads it; its researchers change it."""

    def has_object_permission(self, request, view, obj) -> bool:
        return request.method in SAFE_METHODS or can_research(request.user, obj)


class ResearchesTheProject(BasePermission):
    """Object-level: the object's project (the object itself when it is one) needs the researcher role
    for what the view declares in ``researcher_only``: ``{action: refusal message}`` for a viewset's
    actions, or one message for every object the view checks (``check_object_permissions``)."""

    def has_object_permission(self, request, view, obj) -> bool:
        declared = getattr(view, "researcher_only", None)
        message = declared.get(getattr(view, "action", None)) if isinstance(declared, dict) else declared
        if message is None:
            return True
        self.message = message
        return can_research(request.user, obj if isinstance(obj, Project) else obj.project_id)


class CanCreateProjects(BasePermission):
    """Guards the ``create`` action of a viewset only."""

    def has_permission(self, request, view) -> bool:
        return getattr(view, "action", None) != "create" or can_create_projects(request.user)
