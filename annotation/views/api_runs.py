"""Alignment runs, jobs and candidate pairs."""
from __future__ import annotations

from django.db.models import Exists, OuterRef, Q
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import AlignmentRun, Assignment, CandidatePair, Job, Label, Prediction, Project, Status
from ..permissions import (
    ResearchesTheProject,
    annotator_only_projects,
    blind_projects,
    researched_projects,
    visible_projects,
)
from ..schema import computed, flags, ids, texts
from ..serializers import AlignmentRunSerializer, CandidatePairSerializer, JobSerializer, pair_list_rows
from ..services.alignment import alignment_runs, pair_filters, pair_rows, run_comparison, run_deletion, run_options
from ..services.background import jobs, progress
from ..services.training import comparison_answer
from .mixins import ReapsLostWork, int_param


@extend_schema_view(list=extend_schema(parameters=ids("project")),
                    retrieve=extend_schema(parameters=flags("scores"), responses=computed(AlignmentRunSerializer)),
                    compare=extend_schema(parameters=ids("old", "new", "offset", "limit") + flags("pairs"),
                                          responses=computed()))
class AlignmentRunViewSet(ReapsLostWork, mixins.CreateModelMixin, mixins.DestroyModelMixin, viewsets.ReadOnlyModelViewSet):
    """Researchers start runs (``POST {"project", "method", "params", "level_pairs", "model_version"}``),
    retry, cancel and delete them; annotators of the project may read them (not while they annotate
    blind: the list leaves those projects' runs out, a run answers 403). A project or model version
    the user cannot see is 404, as if it did not exist."""

    serializer_class = AlignmentRunSerializer
    permission_classes = [IsAuthenticated, ResearchesTheProject]
    researcher_only = {"create": "only the project's researchers can start alignment runs",
                       "destroy": "only the project's researchers can delete runs",
                       "retry": "only the project's researchers can retry runs",
                       "cancel": "only the project's researchers can cancel runs",
                       "compare": "only the project's researchers can compare runs"}
    # the services refuse with their own status and code (a bad method, queue or level pair, a run that cannot be
    # deleted, retried or compared: 400 {"detail", "code"}); a bad option: 400 {"detail", "code", "problems",
    # "params", "valid_options"}: the exception handler answers them, nothing to declare here

    def get_queryset(self):
        # newest first; id breaks ties of equal times, so pages neither repeat nor skip a run
        qs = AlignmentRun.objects.filter(project__in=visible_projects(self.request.user)).order_by("-created_at", "-id")
        if self.action == "list":
            qs = qs.exclude(project_id__in=blind_projects(self.request.user))
        project = int_param(self.request, "project")
        return qs.filter(project_id=project) if project is not None else qs

    def get_serializer_context(self):
        """A run's detail carries its ``scores`` against exhaustive gold unless asked not to (``?scores=0``:
        the client's polling, which would compute them on every poll); lists and actions do not."""
        wanted = self.request.query_params.get("scores", "1").lower() not in ("0", "false", "no")
        return {**super().get_serializer_context(), "scores": self.action == "retrieve" and wanted}

    def get_object(self):
        run = super().get_object()
        if self.action == "retrieve" and run.project_id in blind_projects(self.request.user):
            raise PermissionDenied("runs are hidden from annotators during blind annotation")
        return run

    def get_serializer(self, *args, **kwargs):
        serializer = super().get_serializer(*args, **kwargs)
        if "data" in kwargs:  # references to what the user cannot see are "not found", like a missing id
            from ..models import ModelVersion

            visible = visible_projects(self.request.user)
            serializer.fields["project"].queryset = visible
            serializer.fields["model_version"].queryset = ModelVersion.objects.filter(project__in=visible)
        return serializer

    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        if not serializer.is_valid():
            for name in ("project", "model_version"):
                if any(getattr(e, "code", "") == "does_not_exist" for e in serializer.errors.get(name, ())):
                    raise NotFound({name: f"{name.replace('_', ' ')} {request.data.get(name)!r} not found"})
            raise ValidationError(serializer.errors)
        project: Project = serializer.validated_data["project"]
        self.check_object_permissions(request, project)
        model_version = serializer.validated_data.get("model_version")
        if model_version is not None and model_version.project_id != project.pk:
            raise ValidationError({"model_version": "belongs to another project"})
        run = alignment_runs.start_run(
            project, serializer.validated_data["method"], params=serializer.validated_data.get("params"),
            level_pairs=serializer.validated_data.get("level_pairs"), model_version=model_version,
            user=request.user, queue=serializer.validated_data["queue"],
        )
        return Response(self.get_serializer(run).data, status=status.HTTP_201_CREATED)

    def destroy(self, request, *args, **kwargs):
        """Delete a finished run, its predictions and the pairs only it proposed that nobody labelled."""
        deleted = run_deletion.delete_run(self.get_object(), user=request.user)
        return Response(deleted.as_dict())

    @action(detail=True, methods=["post"])
    def retry(self, request, pk=None):
        """Queue a failed, cancelled or queued run again, or a running one whose worker was lost; it
        resumes after the document pairs it had finished (400 for a succeeded or live run)."""
        run = jobs.retry_run(self.get_object(), user=request.user)
        return Response(self.get_serializer(run).data, status=status.HTTP_202_ACCEPTED)

    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        """Stop a queued or running run, its worker alive or lost (the worker stops before its next
        batch of articles)."""
        run = self.get_object()
        if not progress.cancel(AlignmentRun, run.pk, user=request.user):
            raise ValidationError({"detail": f"run #{run.pk} has finished ({run.status}); nothing to cancel"})
        run.refresh_from_db()
        return Response(self.get_serializer(run).data)

    @action(detail=False, methods=["get"])
    def compare(self, request):
        """``GET /api/runs/compare/?old=<id>&new=<id>[&pairs=1]`` → counts by kind of change, per
        article (the first ``ARTICLES_SHOWN``; ``per_article_total``), agreement, both runs' ``scores``
        against exhaustive gold (``{"old", "new"}``, as in a run's detail); with ``pairs=1`` the
        changed pairs with their old and new prediction, a page at a time (``offset``, ``limit`` up
        to ``CHANGES_PAGE``; ``changes_total``, ``changes_next_offset``)."""
        old, new = (self._research_run(request, name) for name in ("old", "new"))
        # a big project's first comparison of two finished runs: 202 while a job computes it (comparison_answer)
        return Response(comparison_answer.api_comparison(old, new, pairs=request.query_params.get("pairs") in ("1", "true"),
                                                         offset=int_param(request, "offset") or 0,
                                                         limit=int_param(request, "limit") or run_comparison.CHANGES_PAGE))

    def _research_run(self, request, name: str) -> AlignmentRun:
        pk = int_param(request, name)
        if pk is None:
            raise ValidationError({name: "required: a run id"})
        run = self.get_queryset().filter(pk=pk).first()
        if run is None:
            raise NotFound(f"run {pk} not found")
        self.check_object_permissions(request, run)
        return run


@extend_schema_view(get=extend_schema(parameters=ids("project")))
class MethodsView(APIView):
    """``GET /api/methods/[?project=<id>]``: every method's options (name, type, default, range, help,
    choices) and the model kinds it loads; with a researched project, its model versions too."""

    permission_classes = [IsAuthenticated, ResearchesTheProject]
    researcher_only = "only the project's researchers see its model versions"

    def get(self, request):
        data: dict = {"methods": run_options.schemas()}
        project_pk = int_param(request, "project")
        if project_pk is not None:
            project = visible_projects(request.user).filter(pk=project_pk).first()
            if project is None:
                raise NotFound(f"project {project_pk} not found")
            self.check_object_permissions(request, project)
            data["model_versions"] = list(run_options.model_versions(project).values("id", "name", "kind"))
        return Response(data)


@extend_schema_view(list=extend_schema(parameters=ids("project")))
class JobViewSet(ReapsLostWork, viewsets.ReadOnlyModelViewSet):
    """Background jobs of the projects the user researches; another member's job is 403, a job of a
    project the user is not in 404."""

    serializer_class = JobSerializer
    permission_classes = [IsAuthenticated, ResearchesTheProject]
    researcher_only = "only the project's researchers see its background jobs"

    def get_queryset(self):
        projects = researched_projects(self.request.user) if self.action == "list" else visible_projects(self.request.user)
        qs = Job.objects.filter(project__in=projects).order_by("-created_at", "-id")
        project = int_param(self.request, "project")
        return qs.filter(project_id=project) if project is not None else qs

    @action(detail=True, methods=["post"])
    def retry(self, request, pk=None):
        """Queue a failed, cancelled or queued job again, or a running one whose worker was lost
        (400 for a succeeded or live job)."""
        job = jobs.retry_job(self.get_object(), user=request.user)
        return Response(self.get_serializer(job).data, status=status.HTTP_202_ACCEPTED)

    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        """Stop a queued or running job (a training job stops at its next epoch or step)."""
        job = self.get_object()
        if not progress.cancel(Job, job.pk, user=request.user):
            raise ValidationError({"detail": f"job #{job.pk} has finished ({job.status}); nothing to cancel"})
        job.refresh_from_db()
        return Response(self.get_serializer(job).data)


@extend_schema_view(list=extend_schema(parameters=ids("project", "run", "article") + flags("labelled") + texts(
    "label", "shape", "q", "ordering", "score__gte", "score__lte", "f.access_char_ratio__gte")))
class CandidatePairViewSet(viewsets.ReadOnlyModelViewSet):
    """Pairs of the user's projects, filterable by ``project``, ``run``, ``article``, ``label``
    (predicted), ``labelled``, ``shape``, ``q`` (text) and attributes (``f.<key>__gte=0.5``), ordered by ``ordering=-score`` or
    ``ordering=features__<key>`` (see :mod:`annotation.services.alignment.pair_filters`).

    Blind annotation (see ``permissions.blind_projects``): annotators don't see the model's score,
    predicted label or attributes unless the project's config has ``"show_predictions": true``; for
    the same reason they may not filter or order by them, nor ask for a run's pairs, there (403),
    and they see only the pairs they were given to label or labelled (which pairs exist would show
    what the model proposed). No annotator sees a pair's ``origin`` (null), which would tell the
    hidden test questions apart."""

    serializer_class = CandidatePairSerializer

    def blind_projects(self) -> set[int]:
        if not hasattr(self, "_blind"):
            self._blind = blind_projects(self.request.user)
        return self._blind

    def get_queryset(self):
        user = self.request.user
        qs = CandidatePair.objects.filter(article__project__in=visible_projects(user))
        qs = qs.select_related("article").order_by("id")
        if self.action != "list":  # a list page reads its pairs' texts and predictions as rows (list below)
            qs = qs.prefetch_related("members__sentence", "predictions__run")
        article = int_param(self.request, "article")
        if article is not None:
            qs = qs.filter(article_id=article)
        run = int_param(self.request, "run")
        if run is not None:
            qs = qs.filter(Exists(Prediction.objects.filter(pair=OuterRef("pk"), run_id=run)))
        project = int_param(self.request, "project")
        if project is not None:
            qs = qs.filter(article__project_id=project)
        params = self.request.query_params
        blind = self.blind_projects()
        if blind and self.action == "list" and (pair_filters.uses_predictions(params) or run is not None):
            scope = set(qs.values_list("article__project_id", flat=True).distinct())
            if scope & blind:
                raise PermissionDenied("predictions are hidden during blind annotation: a run's pairs, and filtering "
                                       "or ordering by score, predicted label or attributes, are not available to "
                                       "annotators here")
        if blind:  # only the pairs they were given (or labelled) there
            given = Q(Exists(Assignment.objects.filter(pair=OuterRef("pk"), annotator=user))
                      | Exists(Label.objects.filter(pair=OuterRef("pk"), annotator=user)))
            qs = qs.filter(~Q(article__project_id__in=blind) | given)
        # a bad filter: PairFilterError's 400 {param: why}
        return pair_filters.apply(qs, params, run=run) if self.action == "list" else qs

    def known_count(self) -> int | None:
        """The list's total without a ``COUNT(*)`` (~1 s over a run's million pairs): the stored ``pair_count``
        of a succeeded run when the list is its pairs and nothing else narrows it (no other filter, not
        blind-limited), else None (the paginator counts)."""
        params = set(self.request.query_params) - {"run", "project", "cursor", "page", "page_size", "ordering"}
        run = int_param(self.request, "run")
        if run is None or params or self.blind_projects():
            return None
        found = (AlignmentRun.objects.filter(pk=run, status=Status.SUCCEEDED, project__in=visible_projects(
            self.request.user)).values_list("project_id", "pair_count").first())
        project = int_param(self.request, "project")
        if found is None or (project is not None and project != found[0]):
            return None
        return found[1]

    def get_serializer_context(self):
        context = super().get_serializer_context()
        context["blind_projects"] = self.blind_projects()
        context["annotator_only_projects"] = annotator_only_projects(self.request.user)
        context["run"] = int_param(self.request, "run")
        return context

    def list(self, request, *args, **kwargs):
        """A page of pairs (``values()`` rows) with their sentences and every run's prediction read as plain
        rows (two more queries, no model instances: :func:`pair_rows.texts_and_predictions`) and answered as the serializer
        would, built as plain dicts (:func:`~annotation.serializers.pair_list_rows`) — a page of 1,000 pairs
        several times faster than through prefetched objects and the serializer's fields."""
        page = self.paginate_queryset(pair_rows.list_rows(self.filter_queryset(self.get_queryset())))
        context = {**self.get_serializer_context(), **pair_rows.texts_and_predictions(page)}
        return self.get_paginated_response(pair_list_rows(page, context))
