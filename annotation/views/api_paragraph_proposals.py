"""API of annotators' paragraph-correction proposals (``services.editing.paragraph_proposals``).

* ``GET /api/projects/<id>/paragraph-proposals/?status=pending|accepted|rejected|all&article=&complex=&simple=``
  — researchers: the project's proposals (default: pending), each with its diff against the links
  in force; annotators: their own only. Paginated (``page``, ``page_size``).
* ``GET /api/paragraph-proposals/<id>/`` — one proposal (researchers, or the annotator who made it).
* ``POST /api/paragraph-proposals/<id>/accept/`` ``{"note"?}`` — researchers: apply it (links stored,
  candidates regenerated); answers ``{"proposal", "saved"}``.
* ``POST /api/paragraph-proposals/<id>/reject/`` ``{"note"}`` — researchers: reject it; links unchanged.

Deciding a proposal that is no longer pending answers 409. Outsiders of the project get 404.
"""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import ParagraphProposal
from ..pagination import numbered_pages
from ..permissions import IsProjectMember, IsProjectResearcher, IsResearcherOrProposalAuthor, visible_projects
from ..schema import PAGES, ids
from ..serializers import ProposalDecisionInput
from ..services.editing import paragraph_proposals
from .mixins import ProjectFromUrl, int_param
from .refusals import Refusals


def _with_urls(item: dict) -> dict:
    """The proposal with where to decide it and where to see it on the paragraph page."""
    page = reverse("article-paragraphs", args=[item["article"]])
    return {**item, "accept_url": reverse("paragraph-proposal-accept", args=[item["id"]]),
            "reject_url": reverse("paragraph-proposal-reject", args=[item["id"]]),
            "page_url": f"{page}?complex={item['complex']['id']}&simple={item['simple']['id']}"}


ProposalPagination = numbered_pages(50, 200)


class ProjectProposalsView(ProjectFromUrl, APIView):
    permission_classes = [IsAuthenticated & IsProjectMember]
    refusals = Refusals(fields={paragraph_proposals.ProposalError: "status"})

    @extend_schema(parameters=PAGES + ids("article", "complex", "simple") + [
        OpenApiParameter("status", str, enum=["pending", "accepted", "rejected", "all"])])
    def get(self, request, project_pk: int) -> Response:
        project = self.get_project()
        raw_status = request.query_params.get("status") or ParagraphProposal.PENDING
        filters = {"status": None if raw_status == "all" else raw_status}
        if not IsProjectResearcher.holds(request, self):  # annotators see their own proposals only
            filters["proposed_by"] = request.user
        rows = paragraph_proposals.proposals(project, **filters, article_id=int_param(request, "article"),
                                             complex_id=int_param(request, "complex"),
                                             simple_id=int_param(request, "simple"))
        paginator = ProposalPagination()
        page = paginator.paginate_queryset(rows, request, view=self)
        return paginator.get_paginated_response([_with_urls(paragraph_proposals.payload(p)) for p in page])


class ProposalView(APIView):
    """The proposal in the URL: 404 unless the user is a member of its project."""

    permission_classes = [IsAuthenticated & IsProjectMember & IsResearcherOrProposalAuthor]

    def get_proposal(self) -> ParagraphProposal:
        if not hasattr(self, "_proposal"):
            rows = ParagraphProposal.objects.filter(article__project__in=visible_projects(self.request.user))
            self._proposal = get_object_or_404(
                rows.select_related("article__project", "complex_document", "simple_document", "proposed_by",
                                    "decided_by"), pk=self.kwargs["pk"])
        return self._proposal

    def get_project(self):
        return self.get_proposal().article.project

    def get(self, request, pk: int) -> Response:
        return Response(_with_urls(paragraph_proposals.payload(self.get_proposal())))


class DecisionView(ProposalView):
    # a researcher's decision on a proposal ({"note"}), made by the subclass's ``decide`` (a comment,
    # not a docstring: the API schema would take it as the operations' description)
    permission_classes = [IsAuthenticated & IsProjectMember & IsProjectResearcher]

    @extend_schema(request=ProposalDecisionInput)
    def post(self, request, pk: int) -> Response:
        data = ProposalDecisionInput(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(self.decide(self.get_proposal(), request.user, data.validated_data["note"]))


class AcceptView(DecisionView):
    decide = staticmethod(paragraph_proposals.accept)


class RejectView(DecisionView):
    decide = staticmethod(paragraph_proposals.reject)
