"""Projects, memberships and label schemes."""
from __future__ import annotations

from django.db import transaction
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from ..models import LabelScheme, Membership
from ..permissions import CanCreateProjects, IsProjectResearcher, IsReadOnly, IsResearcherForWrites, visible_projects
from ..serializers import JobSerializer, LabelSchemeSerializer, MembershipSerializer, ProjectSerializer
from ..services.background import jobs
from ..services.projects import creation as project_service
from ..services.scoring import jobs as scoring
from ..services.settings import project_settings as settings_service
from .mixins import ProjectFromUrl
from .refusals import Refusals


class ProjectViewSet(viewsets.ModelViewSet):
    serializer_class = ProjectSerializer
    permission_classes = [IsAuthenticated & CanCreateProjects & IsResearcherForWrites]
    # a bad config: {"config": {key: why}}; another settings refusal: {"detail"}
    refusals = Refusals(fields={settings_service.ConfigSettingsError: "config"})

    def get_queryset(self):
        # id breaks ties of equal names, so pages neither repeat nor skip a project
        return visible_projects(self.request.user).select_related("label_scheme").order_by("name", "id")

    @transaction.atomic
    def perform_create(self, serializer) -> None:
        project = serializer.save(created_by=self.request.user)
        # a new project has no runs or model versions for its config to name
        settings_service.checked_config(project.config or {}, project=project)
        project_service.add_creator(project, self.request.user)

    def perform_update(self, serializer) -> None:
        """The settings page's rules (``project_settings.update_project``): no scheme change once
        labels exist, a valid config naming only this project's runs and model versions. ``PATCH``
        merges ``config`` as a JSON merge patch (RFC 7396); ``PUT`` replaces it."""
        serializer.instance = settings_service.update_project(serializer.instance, dict(serializer.validated_data),
                                                              by=self.request.user, merge_config=serializer.partial)

    @action(detail=True, methods=["post"], url_path="stats")
    def stats(self, request, pk=None):
        """Queue a corpus-statistics job; poll ``/api/jobs/<id>/`` for the result."""
        project = self.get_object()
        job = jobs.start_job(project, "corpus-stats", user=request.user)
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)

    @action(detail=True, methods=["post"], url_path="score")
    def score(self, request, pk=None):
        """Queue a scoring job: ``{"kind": <a registered scoring kind: access-attributes, sum4simp-filter, ...>,
        "params": {...}}`` (params may also be given at the top level), parsed once against the kind's
        declaration (``services/scoring/kinds/``). Researchers only; 202 with the job, poll ``/api/jobs/<id>/``."""
        project = self.get_object()
        data = request.data
        nested = data.get("params", {})
        if not isinstance(nested, dict):
            raise ValidationError({"params": "must be a JSON object"})
        params = {**{k: v for k, v in data.items() if k not in ("kind", "params")}, **nested}
        parsed = scoring.parse_request(project, str(data.get("kind", "")), params, visible=visible_projects(request.user))
        job = scoring.start_scoring(project, parsed, user=request.user)
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class MembershipViewSet(ProjectFromUrl, mixins.ListModelMixin, mixins.CreateModelMixin, mixins.DestroyModelMixin,
                        viewsets.GenericViewSet):
    serializer_class = MembershipSerializer
    permission_classes = [IsAuthenticated & IsProjectResearcher]

    def get_queryset(self):
        return Membership.objects.filter(project=self.get_project()).select_related("user").order_by("id")

    def perform_create(self, serializer) -> None:
        data = serializer.validated_data
        serializer.instance = settings_service.add_member(self.get_project(), data["user"].username, data["role"],
                                                          by=self.request.user)

    def perform_destroy(self, instance) -> None:
        settings_service.remove_member(self.get_project(), instance.pk, by=self.request.user)


class SchemeInUse(APIException):
    status_code = 409
    default_code = "scheme_in_use"


class LabelSchemeViewSet(viewsets.ModelViewSet):
    """Everyone reads; site admins add custom schemes."""

    serializer_class = LabelSchemeSerializer
    queryset = LabelScheme.objects.order_by("id")

    def get_permissions(self):
        from ..permissions import IsSiteAdmin

        return [IsAuthenticated(), (IsReadOnly | IsSiteAdmin)()]

    def perform_destroy(self, instance: LabelScheme) -> None:
        """A scheme that projects use cannot go (their labels would lose their meaning): 409 naming them."""
        used = list(instance.projects.order_by("name").values_list("name", flat=True)[:5])
        if used:
            raise SchemeInUse(f"label scheme '{instance.slug}' is used by project(s): {', '.join(used)}; "
                              "change their scheme first")
        instance.delete()
