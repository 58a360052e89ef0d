"""The document workflow's API (issue 18 §8).

* ``GET /api/projects/<id>/my-articles/?state=todo|in_progress|complete&page=`` — the user's articles
  of the project with their state (``services.editing.workflow``): ``{"counts": {todo, in_progress,
  complete, all}, "count", "next", "previous", "results": [{id, title, state, state_name, labels,
  completed_pairs}]}``. Any member (no run or method named: blind annotators too).
* ``GET /api/articles/<id>/curation/?complex=&simple=&a=<username>&b=<username>`` — researchers: the
  curation of two annotators' alignments of the document pair (``services.editing.curation``):
  both documents, ``annotators`` (who aligned it), and with ``a`` and ``b`` every link as a row
  ``{complex, simple, category: agree|disagree|only_a|only_b|gold_only, a, b, gold}`` and ``counts``.
* ``POST`` the same URL ``{"decisions": [{"complex": c, "simple": s, "decision":
  "a"|"b"|"aligned"|"partial"|"not"}], "note": ""}`` — the gold of each link (adjudicated, with
  history); answers ``{"saved": {decided, changed}, ...the GET payload}``.

Curation: annotators of the project get 403, anyone else 404.
"""
from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from ..pagination import numbered_pages
from ..permissions import IsProjectMember, IsProjectResearcher
from ..services.editing import curation, workflow
from .api_articles import DOCUMENTS, ArticleView
from .mixins import ProjectFromUrl
from .refusals import Refusals

ArticlePagination = numbered_pages(50, 200)


class MyArticlesView(ProjectFromUrl, APIView):
    permission_classes = [IsAuthenticated & IsProjectMember]
    refusals = Refusals(fields={workflow.WorkflowError: "state"})

    @extend_schema(parameters=[OpenApiParameter("state", str, enum=list(workflow.STATES)),
                               OpenApiParameter("page", int)])
    def get(self, request, project_pk: int) -> Response:
        project = self.get_project()
        rows = workflow.my_articles(project.articles.all(), request.user, request.query_params.get("state"))
        paginator = ArticlePagination()
        page = paginator.paginate_queryset(rows, request, view=self)
        response = paginator.get_paginated_response([workflow.article_row(a) for a in page])
        response.data["counts"] = workflow.state_counts(project.articles.all(), request.user)
        return response


PEOPLE = [OpenApiParameter("a", str), OpenApiParameter("b", str)]


@extend_schema_view(get=extend_schema(parameters=DOCUMENTS + PEOPLE), post=extend_schema(parameters=DOCUMENTS + PEOPLE))
class CurationView(ArticleView):
    permission_classes = [IsAuthenticated & IsProjectMember & IsProjectResearcher]

    def _people(self, article, complex_doc, simple_doc, *, required: bool):
        a, b = (self.request.query_params.get(k) or None for k in ("a", "b"))
        if not required and a is None and b is None:
            return None, None
        users = [curation.resolve_annotator(article, complex_doc, simple_doc, name_, side)
                 for side, name_ in (("a", a), ("b", b))]
        if users[0] == users[1]:
            raise curation.CurationError("a and b must be two different annotators")
        return users

    def get(self, request, pk: int) -> Response:
        article = self.get_article()
        complex_doc, simple_doc = self.documents()
        a, b = self._people(article, complex_doc, simple_doc, required=False)
        return Response(curation.curation_state(article, complex_doc, simple_doc, a, b))

    def post(self, request, pk: int) -> Response:
        article = self.get_article()
        body = request.data if isinstance(request.data, dict) else {}
        note = body.get("note", "")
        if not isinstance(note, str) or len(note) > 5000:
            raise curation.CurationError("'note' must be a text of at most 5000 characters")
        complex_doc, simple_doc = self.documents()
        a, b = self._people(article, complex_doc, simple_doc, required=True)
        saved = curation.decide_links(article, complex_doc, simple_doc, a, b, body.get("decisions"), request.user,
                                      note=note)
        return Response({"saved": saved, **curation.curation_state(article, complex_doc, simple_doc, a, b)})
