"""Researcher-only API of the review area: adjudication queue and decisions, automatic gold,
agreement, dashboard numbers, score distributions and threshold calibration.

All under ``/api/projects/<id>/``; annotators of the project get 403, anyone else 404.
"""
from __future__ import annotations

from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import CandidatePair
from ..permissions import IsProjectResearcher
from ..services import adjudication, agreement, calibration, dashboard
from .mixins import ProjectFromUrl, int_param


class ReviewView(ProjectFromUrl, APIView):
    permission_classes = [IsAuthenticated & IsProjectResearcher]


class QueuePagination(PageNumberPagination):
    page_size = 20
    page_size_query_param = "page_size"
    max_page_size = 100


class DecisionInput(serializers.Serializer):
    pair = serializers.IntegerField()
    value = serializers.CharField(max_length=50)
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)


def _gold_payload(gold) -> dict:
    return {"pair": gold.pair_id, "value": gold.value, "provenance": gold.provenance,
            "reviewer": gold.reviewer.username if gold.reviewer else None, "note": gold.note,
            "created_at": gold.created_at.isoformat()}


class AdjudicationView(ReviewView):
    """``GET`` → the review queue, paginated (``page``, ``page_size``; ``mode=all|disagreements`` overrides
    the project's setting; ``score=1`` adds the model's score). ``POST {pair, value, note}`` → the gold
    label (201 the first time, 200 when it replaced an earlier one) and the number of pairs left."""

    def get(self, request, project_pk: int):
        project = self.get_project()
        mode = request.query_params.get("mode") or None
        with_score = request.query_params.get("score", "").lower() in ("1", "true", "yes") or None
        try:
            ids = adjudication.queue_pair_ids(project, mode=mode)
        except adjudication.AdjudicationError as exc:
            raise ValidationError({"mode": str(exc)}) from exc
        paginator = QueuePagination()
        page = paginator.paginate_queryset(ids, request, view=self)
        items = adjudication.queue_items(project, list(page), with_score=with_score)
        return paginator.get_paginated_response(items)

    def post(self, request, project_pk: int):
        project = self.get_project()
        data = DecisionInput(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        pair = CandidatePair.objects.filter(pk=d["pair"], article__project=project).select_related(
            "article__project__label_scheme").first()
        if pair is None:
            return Response({"pair": f"pair #{d['pair']} is not in this project"}, status=status.HTTP_404_NOT_FOUND)
        existed = hasattr(pair, "gold")
        try:
            gold = adjudication.decide(pair, d["value"], request.user, d["note"])
        except adjudication.AdjudicationError as exc:
            raise ValidationError({"value": str(exc)}) from exc
        return Response({"adjudication": _gold_payload(gold), "remaining": adjudication.remaining(project)},
                        status=status.HTTP_200_OK if existed else status.HTTP_201_CREATED)


class AutoGoldInput(serializers.Serializer):
    policy = serializers.ChoiceField(choices=adjudication.POLICIES, default="majority")


class AutoGoldView(ReviewView):
    """``POST {policy: majority|single}`` → counts of gold labels created/updated/removed."""

    def post(self, request, project_pk: int):
        data = AutoGoldInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            result = adjudication.auto_gold(self.get_project(), data.validated_data["policy"])
        except adjudication.AdjudicationError as exc:
            raise ValidationError({"policy": str(exc)}) from exc
        return Response({"policy": data.validated_data["policy"], **result,
                         "gold": adjudication.gold_counts(self.get_project())})


class AgreementView(ReviewView):
    """``GET`` → Cohen's κ (pairwise), Fleiss' κ, Krippendorff's α and link agreement."""

    def get(self, request, project_pk: int):
        return Response(agreement.project_agreement(self.get_project()))


class DashboardView(ReviewView):
    """``GET`` → progress, per-annotator rows, label counts, runs and the stored thresholds."""

    def get(self, request, project_pk: int):
        return Response(dashboard.dashboard(self.get_project()))


class ScoreDistributionView(ReviewView):
    """``GET ?run=`` → scores of labelled pairs per human label with box-plot stats, suggested and
    current thresholds (no ``run``: the newest run with labelled pairs)."""

    def get(self, request, project_pk: int):
        try:
            return Response(calibration.score_distribution(self.get_project(), int_param(request, "run")))
        except calibration.CalibrationError as exc:
            raise ValidationError({"run": str(exc)}) from exc


class CalibrateInput(serializers.Serializer):
    method = serializers.ChoiceField(choices=calibration.METHODS)
    run = serializers.IntegerField(required=False, allow_null=True, default=None)


class CalibrateView(ReviewView):
    """``POST {method: mean-valid|max-f1, run?}`` → the thresholds stored in ``config["thresholds"]``."""

    def post(self, request, project_pk: int):
        data = CalibrateInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            stored = calibration.calibrate(self.get_project(), data.validated_data["method"],
                                           data.validated_data["run"])
        except calibration.CalibrationError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return Response(stored)
