"""Alignment runs, jobs and candidate pairs."""
from __future__ import annotations

from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from ..models import AlignmentRun, CandidatePair, Job, Project
from ..permissions import can_research, researched_projects, visible_projects
from ..serializers import AlignmentRunSerializer, CandidatePairSerializer, JobSerializer
from ..services import alignment_runs, jobs
from .mixins import int_param


class AlignmentRunViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Researchers start runs (``POST {"project", "method", "params", "level_pairs"}``) and retry failed ones;
    annotators of the project may read them."""

    serializer_class = AlignmentRunSerializer
    permission_classes = [IsAuthenticated]

    def get_queryset(self):
        qs = AlignmentRun.objects.filter(project__in=visible_projects(self.request.user))
        project = int_param(self.request, "project")
        return qs.filter(project_id=project) if project is not None else qs

    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        project: Project = serializer.validated_data["project"]
        if not can_research(request.user, project):
            raise PermissionDenied("only the project's researchers can start alignment runs")
        model_version = serializer.validated_data.get("model_version")
        if model_version is not None and model_version.project_id != project.pk:
            raise ValidationError({"model_version": "belongs to another project"})
        try:
            run = alignment_runs.start_run(
                project, serializer.validated_data["method"], params=serializer.validated_data.get("params"),
                level_pairs=serializer.validated_data.get("level_pairs"), model_version=model_version,
                user=request.user, queue=request.data.get("queue", "gpu"),
            )
        except ValueError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return Response(self.get_serializer(run).data, status=status.HTTP_201_CREATED)

    @action(detail=True, methods=["post"])
    def retry(self, request, pk=None):
        run = self.get_object()
        if not can_research(request.user, run.project_id):
            raise PermissionDenied("only the project's researchers can retry runs")
        try:
            run = jobs.retry_run(run)
        except ValueError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return Response(self.get_serializer(run).data, status=status.HTTP_202_ACCEPTED)


class JobViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = JobSerializer

    def get_queryset(self):
        qs = Job.objects.filter(project__in=researched_projects(self.request.user))
        project = int_param(self.request, "project")
        return qs.filter(project_id=project) if project is not None else qs


class CandidatePairViewSet(viewsets.ReadOnlyModelViewSet):
    """Pairs of the user's projects. Annotators don't see the model's score or predicted label
    unless the project's config has ``"show_predictions": true`` (blind annotation)."""

    serializer_class = CandidatePairSerializer

    def get_queryset(self):
        qs = CandidatePair.objects.filter(article__project__in=visible_projects(self.request.user))
        qs = qs.select_related("article").prefetch_related("members__sentence").order_by("id")
        for name in ("run", "article"):
            value = int_param(self.request, name)
            if value is not None:
                qs = qs.filter(**{f"{name}_id": value})
        project = int_param(self.request, "project")
        return qs.filter(article__project_id=project) if project is not None else qs

    def get_serializer_context(self):
        context = super().get_serializer_context()
        user = self.request.user
        context["blind_projects"] = {
            p.pk for p in visible_projects(user) if not can_research(user, p) and not p.config.get("show_predictions")
        }
        return context
