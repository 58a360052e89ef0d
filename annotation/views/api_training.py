"""Training API (training jobs, the model registry): train, list versions, promote, re-align, download.

* ``POST /api/projects/<p>/train/ {config, seed, base_version}`` → 202 the training job (queued on
  ``gpu``); 400 with the reason when there is nothing to train on or an option is bad.
* ``GET /api/projects/<p>/model-versions/`` → the project's trained versions, newest first.
* ``POST /api/model-versions/<id>/promote/ {confirm}`` → the project's default for crf runs; 409 with
  the warnings when it is worse than the current default or the untrained crf on the test
  articles, unless ``confirm`` is true (recorded in the audit log with the metrics).
* ``POST /api/model-versions/<id>/realign/ {scope: all|unlabelled}`` → 201 the new crf run.
* ``GET /api/model-versions/<id>/download/`` → the version's files as a zip.
Researchers of the project only; everyone else gets 404 (or 403 for members who are annotators).
"""
from __future__ import annotations

from django.http import FileResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import ModelVersion
from ..permissions import IsProjectResearcher, visible_projects
from ..requests import json_schema
from ..serializers import AlignmentRunSerializer, JobSerializer, PromoteInput
from ..services.alignment import run_options
from ..services.settings import project_settings as settings_service
from ..services.training import metrics as training_metrics
from ..services.training import versions as training
from ..services.training.request import TRAIN_REQUEST_OPTIONS, TrainRequest
from .mixins import ProjectFromUrl
from .refusals import Refusals


def version_payload(version: ModelVersion, default: ModelVersion | None) -> dict:
    snapshot = version.training_snapshot or {}
    return {"id": version.pk, "name": version.name, "kind": version.kind, "parent": version.parent_id,
            "created_at": version.created_at.isoformat(), "default": default is not None and version.pk == default.pk,
            "job": version.job_id, "metrics": version.metrics, "assessment": training_metrics.assess(version, default),
            "data": {k: snapshot.get(k) for k in ("articles", "exhaustive_links", "exhaustive_sources", "pair_examples",
                                                   "pair_example_classes", "hash")},
            "config": snapshot.get("config", {}), "seed": snapshot.get("seed"),
            "decisions": learnt_decisions((snapshot.get("manifest") or {}).get("decisions"))}


def learnt_decisions(decisions: dict | None) -> dict | None:
    """What training chose on its held-out articles (emission weight, label rule) and how many
    articles the domain profile was built from — shown under the version."""
    if not decisions:
        return None
    rule = decisions.get("label_rule") or {}
    ranges = (decisions.get("domain") or {}).get("ranges") or {}
    return {"pair_model_weight": decisions.get("pair_model_weight"), "weight_cap": decisions.get("weight_cap"),
            "label_rule": rule.get("chosen"), "label_rule_heldout_task2": rule.get("heldout_task2"),
            "domain_statistics": sorted(ranges)}


class TrainsModels(IsProjectResearcher):
    message = "only the project's researchers train and manage models"


class ManagesModels(IsProjectResearcher):
    message = "only the project's researchers manage models"


class ResearcherProject(ProjectFromUrl, APIView):
    permission_classes = [IsAuthenticated, TrainsModels]


class TrainView(ResearcherProject):
    @extend_schema(request={"application/json": {"type": "object", "properties": json_schema(TRAIN_REQUEST_OPTIONS)}})
    def post(self, request, project_pk: int):
        project = self.project
        job = training.start_training(project, TrainRequest.parse(request.data), user=request.user)
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class VersionListView(ResearcherProject):
    def get(self, request, project_pk: int):
        project = self.get_project()
        default = run_options.default_version(project)
        return Response([version_payload(v, default)
                         for v in training.model_versions(project).order_by("-created_at", "-pk")])


class VersionView(APIView):
    # the model version in the URL: 404 unless the user sees its project, 403 unless they research it
    # (no docstring: it would become the description of every version endpoint in the API schema)
    permission_classes = [IsAuthenticated, ManagesModels]

    def version(self, request, pk: int) -> ModelVersion:
        if not hasattr(self, "_version"):
            self._version = get_object_or_404(ModelVersion.objects.filter(project__in=visible_projects(request.user))
                                              .select_related("project"), pk=pk)
        return self._version

    def get_project(self):
        return self.version(self.request, self.kwargs["pk"]).project


class PromoteView(VersionView):
    """409 with the warnings when the version is worse than the current default or the untrained
    crf on the test articles, unless the request says ``{"confirm": true}``."""

    @extend_schema(request=PromoteInput)
    def post(self, request, pk: int):
        version = self.version(request, pk)
        data = PromoteInput(data=request.data)
        data.is_valid(raise_exception=True)
        training.promote(version, user=request.user, confirm=data.validated_data["confirm"])
        return Response(version_payload(version, version))


class RealignView(VersionView):
    def post(self, request, pk: int):
        version = self.version(request, pk)
        run = training.realign(version, scope=request.data.get("scope", "all"), user=request.user)
        return Response(AlignmentRunSerializer(run).data, status=status.HTTP_201_CREATED)


class DownloadView(VersionView):
    refusals = Refusals(status={training.TrainingError: status.HTTP_404_NOT_FOUND})  # its files are missing

    def get(self, request, pk: int):
        version = self.version(request, pk)
        path = training.zip_version(version)
        return FileResponse(path.open("rb"), as_attachment=True, filename=f"{version.name}.zip")


class ReviewChangesView(ResearcherProject):
    """``POST /api/projects/<p>/review-changes/ {old, new}`` → the annotation queue holds only the
    pairs whose prediction differs between the two runs (what changed with a new model version);
    ``{"clear": true}`` → back to the whole queue."""

    def post(self, request, project_pk: int):
        project = self.get_project()
        changes = None if request.data.get("clear") else {name: request.data.get(name) for name in ("old", "new")}
        # refused: ConfigSettingsError's body, {"queue_changes": why}
        stored = settings_service.set_queue_changes(project, changes, by=request.user)
        return Response({"queue_changes": stored})
