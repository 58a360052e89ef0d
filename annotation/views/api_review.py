"""Researcher-only API of the review area: adjudication queue and decisions, a decided pair's gold
history and its revert, automatic gold (previewed, then confirmed), agreement, dashboard numbers,
score distributions and threshold calibration.

All under ``/api/projects/<id>/``; annotators of the project get 403, anyone else 404.
"""
from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import CandidatePair
from ..pagination import numbered_pages
from ..permissions import IsProjectResearcher
from ..schema import PAGES, computed, flags, ids
from ..serializers import AutoGoldInput, CalibrateInput, DecisionInput
from ..services.review import adjudication, dashboard
from ..services.scoring import calibration, kept_distribution
from .mixins import ProjectFromUrl, int_param
from .refusals import Refusals, refuses


class ReviewView(ProjectFromUrl, APIView):
    permission_classes = [IsAuthenticated & IsProjectResearcher]


QueuePagination = numbered_pages(20, 100)


def _gold_payload(gold) -> dict:
    return {"pair": gold.pair_id, "value": gold.value, "provenance": gold.provenance,
            "reviewer": gold.reviewer.username if gold.reviewer else None, "note": gold.note,
            "created_at": gold.created_at.isoformat()}


class AdjudicationView(ReviewView):
    """``GET`` → the review queue, paginated (``page``, ``page_size``; ``mode=all|disagreements`` overrides
    the project's setting; ``score=1`` adds the model's score). ``POST {pair, value, note}`` → the gold
    label (201 the first time, 200 when it replaced an earlier one) and the number of pairs left."""

    @refuses(fields={adjudication.AdjudicationError: "mode"})
    @extend_schema(operation_id="projects_adjudication_list", parameters=PAGES + flags("score") + [
        OpenApiParameter("mode", str, enum=list(adjudication.MODES))])
    def get(self, request, project_pk: int):
        project = self.get_project()
        mode = request.query_params.get("mode") or None
        with_score = request.query_params.get("score", "").lower() in ("1", "true", "yes") or None
        ids = adjudication.queue_pair_ids(project, mode=mode)
        paginator = QueuePagination()
        page = paginator.paginate_queryset(ids, request, view=self)
        items = adjudication.queue_items(project, list(page), with_score=with_score)
        return paginator.get_paginated_response(items)

    @refuses(fields={adjudication.AdjudicationError: "value"})
    @extend_schema(request=DecisionInput)
    def post(self, request, project_pk: int):
        project = self.get_project()
        data = DecisionInput(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        pair = CandidatePair.objects.filter(pk=d["pair"], article__project=project).select_related(
            "article__project__label_scheme").first()
        if pair is None:
            return Response({"pair": f"pair #{d['pair']} is not in this project"}, status=status.HTTP_404_NOT_FOUND)
        # created: whether this call made the gold row (one 201 among parallel first decisions)
        gold, created = adjudication.decide_created(pair, d["value"], request.user, d["note"])
        return Response({"adjudication": _gold_payload(gold), "remaining": adjudication.remaining(project)},
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


def _pair_or_404(project, pair_pk: int) -> CandidatePair:
    pair = (CandidatePair.objects.filter(pk=pair_pk, article__project=project)
            .select_related("article__project__label_scheme").first())
    if pair is None:
        raise NotFound({"pair": f"pair #{pair_pk} is not in this project"})
    return pair


class DecidedView(ReviewView):
    """``GET`` → the pairs whose gold a reviewer decided, changed or reverted, the latest first,
    paginated like the queue; each with its current gold (to open, change or revert)."""

    @extend_schema(parameters=PAGES)
    def get(self, request, project_pk: int):
        project = self.get_project()
        paginator = QueuePagination()
        page = paginator.paginate_queryset(adjudication.recently_decided_pair_ids(project), request, view=self)
        return paginator.get_paginated_response(adjudication.queue_items(project, list(page)))


class PairReviewView(ReviewView):
    """``GET`` → one pair as the review page shows it (texts, votes, gold) with its gold history
    (oldest first) and ``revert_to``: the gold a revert would restore (``value`` empty: no gold;
    null: nothing to revert). A decided pair is changed with ``POST adjudication/``."""

    def get(self, request, project_pk: int, pair_pk: int):
        project = self.get_project()
        return Response(adjudication.pair_review(project, _pair_or_404(project, pair_pk)))


class RevertView(ReviewView):
    """``POST`` → take back the pair's latest gold change not reverted yet (recorded as a change
    itself); answers the pair as ``GET`` does plus the number of pairs left in the queue. 400 when
    nothing is left to revert."""

    refusals = Refusals(fields={adjudication.AdjudicationError: "pair"})

    def post(self, request, project_pk: int, pair_pk: int):
        project = self.get_project()
        pair = _pair_or_404(project, pair_pk)
        adjudication.revert(pair, request.user)
        return Response({**adjudication.pair_review(project, pair), "remaining": adjudication.remaining(project)})


class AutoGoldView(ReviewView):
    """Automatic gold in two steps, so nobody decides hundreds of pairs by accident.

    ``GET ?policy=majority|single`` (or ``POST {policy}`` without confirmation) → the preview:
    what it would create/update/remove and ``total``, nothing written (``applied: false``).
    ``POST {policy, confirm: true}`` or ``POST {policy, expected: <the preview's total>}`` → applies
    it and answers the counts (``applied: true``) and the gold per provenance. When ``expected`` no
    longer matches (votes changed since the preview), 409 with the new preview and nothing written.
    """

    refusals = Refusals(fields={adjudication.AdjudicationError: "policy"})

    def _policy(self, data) -> dict:
        checked = AutoGoldInput(data=data)
        checked.is_valid(raise_exception=True)
        return checked.validated_data

    def _preview(self, policy: str) -> dict:
        preview = adjudication.auto_gold_preview(self.get_project(), policy)
        return {"policy": policy, "applied": False, **preview, "gold": adjudication.gold_counts(self.get_project())}

    @extend_schema(parameters=[OpenApiParameter("policy", str, enum=list(adjudication.POLICIES))])
    def get(self, request, project_pk: int):
        return Response(self._preview(self._policy(request.query_params)["policy"]))

    @extend_schema(request=AutoGoldInput)
    def post(self, request, project_pk: int):
        data = self._policy(request.data)
        policy = data["policy"]
        if not data["confirm"] and data["expected"] is None:
            return Response(self._preview(policy))
        if data["expected"] is not None:
            preview = self._preview(policy)
            if preview["total"] != data["expected"]:
                return Response({**preview, "detail": f"The votes changed: this would now decide {preview['total']} "
                                                      f"items, not {data['expected']}. Confirm again."},
                                status=status.HTTP_409_CONFLICT)
        result = adjudication.auto_gold(self.get_project(), policy, by=request.user)
        return Response({"policy": policy, "applied": True, **result,
                         "gold": adjudication.gold_counts(self.get_project())})


class AgreementView(ReviewView):
    """``GET`` → Cohen's κ (pairwise), Fleiss' κ, Krippendorff's α and link agreement."""

    @extend_schema(responses=computed())
    def get(self, request, project_pk: int):
        return Response(dashboard.project_agreement(self.get_project()))


class DashboardView(ReviewView):
    """``GET`` → progress, per-annotator rows, label counts, runs and the stored thresholds."""

    @extend_schema(responses=computed())
    def get(self, request, project_pk: int):
        return Response(dashboard.dashboard(self.get_project()))


class ScoreDistributionView(ReviewView):
    """``GET ?run=`` → scores of labelled pairs per human label with box-plot stats, suggested and
    current thresholds (no ``run``: the newest run with labelled pairs)."""

    refusals = Refusals(fields={calibration.CalibrationError: "run"})

    @extend_schema(parameters=ids("run"), responses=computed())
    def get(self, request, project_pk: int):
        # kept per state of the data; a big project's from a job (as_of/updating, or 202 before any is kept)
        return Response(kept_distribution.distribution(self.get_project(), int_param(request, "run")))


class CalibrateView(ReviewView):
    """``POST {method: mean-valid|max-f1, run?}`` → the thresholds stored in ``config["thresholds"]``."""

    @extend_schema(request=CalibrateInput)
    def post(self, request, project_pk: int):
        data = CalibrateInput(data=request.data)
        data.is_valid(raise_exception=True)
        stored = calibration.calibrate(self.get_project(), data.validated_data["method"], data.validated_data["run"])
        return Response(stored)
