"""Article-level API: the whole-article alignment and the paragraph-alignment correction.

* ``GET/PUT /api/articles/<id>/alignment/?complex=&simple=&run=`` — the user's per-link links
  (``services.editing.links``). GET answers the links (``{"complex": [c], "simple": [s], "label"}``
  each), their derived ``groups`` and ``version`` (also the ``ETag`` header). PUT body ``{"links":
  [{"complex": c, "simple": s, "label": "aligned"|"partial"}], "removed": [{"complex": c, "simple":
  s}], "version": "..", "base": [links loaded], "seconds": 12.5}``: the links on screen (a list of
  sentences on a side is shorthand for each of its links), the links this tab loaded and removed
  (the only ones labelled "not aligned"), the version it loaded (or an ``If-Match`` header) and the
  time since the page was opened or last saved. Answers ``{"saved": {counts}, ...the GET payload}``;
  a save based on an older version answers **409** ``{"code": "conflict", "changes": {added,
  removed, relabelled}, ...the current GET payload}`` and writes nothing.
* ``POST/DELETE /api/articles/<id>/alignment/completion/?complex=&simple=`` — mark the user's
  alignment of the document pair complete (body ``{"seconds": 300}``; 201, or 200 when it already
  was) or reopen it; answers ``{"completion": {annotator, completed_at, seconds} | null, "completions": [..]}``.
  Without a single link of the user's the pair is marked complete only with ``"empty": true`` in the
  body; else **409** ``{"code": "empty", "not_aligned": <sentence pairs that would become not aligned>}``.
* ``GET/PUT /api/articles/<id>/paragraphs/?complex=&simple=`` — paragraph links (PUT body
  ``{"links": [{"complex": 0, "simple": 1}, ...]}``); saving regenerates the sentence candidates.
* ``POST /api/projects/<id>/paragraph-alignment/`` — researchers: recompute the automatic
  paragraph links of the whole project in a job (``{"candidates": true}`` also regenerates candidates).

Per-request bounds (``services.corpus.article_size``): a document over ``ARTICLE_MAX_SENTENCES``, or
automatic paragraph links over ``ARTICLE_MAX_SIMILARITY_CELLS`` complex × simple sentences, answer
413 with the limit named (``{"detail", "code": "too_large", "limit": setting}``).

Members of the article's project only (others get 404). Logic lives in
``services.editing.article_alignment`` and ``services.editing.paragraph_correction``.
"""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import Article
from ..permissions import IsProjectMember, IsProjectResearcher, visible_projects
from ..schema import ids
from ..serializers import JobSerializer
from ..services.alignment import paragraph_alignment
from ..services.corpus import article_size
from ..services.editing import article_alignment, completion, paragraph_correction
from .mixins import ProjectFromUrl, int_param
from .refusals import Refusals

#: The article editors' refusals: ``{"detail", "errors": [..], "code"}`` (400 "invalid" for a refusal of the
#: services whose class has no code), 413 "too_large" with the ``limit``, 403 "excluded", 409 "empty".
EDITOR_REFUSALS = Refusals(code="invalid", listed=True)


class ArticleView(APIView):
    """The article in the URL (404 unless the user is a member of its project) and its two versions."""

    permission_classes = [IsAuthenticated & IsProjectMember]
    refusals = EDITOR_REFUSALS

    def get_article(self) -> Article:
        if not hasattr(self, "_article"):
            articles = Article.objects.filter(project__in=visible_projects(self.request.user))
            self._article = get_object_or_404(articles.select_related("project__label_scheme"), pk=self.kwargs["pk"])
        return self._article

    def get_project(self):
        return self.get_article().project

    def documents(self):
        """The document pair in the query, each within ``ARTICLE_MAX_SENTENCES`` (else ArticleTooLarge: 413)."""
        complex_doc, simple_doc = article_alignment.resolve_documents(
            self.get_article(), int_param(self.request, "complex"), int_param(self.request, "simple"))
        article_size.check_documents(complex_doc, simple_doc)
        return complex_doc, simple_doc


DOCUMENTS = ids("complex", "simple")


def _with_etag(response: Response) -> Response:
    response["ETag"] = f'"{response.data["version"]}"'
    return response


def _if_match(request) -> str | None:
    """The version in an ``If-Match: "<version>"`` header (None without one)."""
    header = request.headers.get("If-Match", "").strip()
    if not header or header == "*":
        return None
    return header.removeprefix("W/").strip('"')


@extend_schema_view(get=extend_schema(parameters=DOCUMENTS + ids("run")), put=extend_schema(parameters=DOCUMENTS + ids("run")))
class AlignmentView(ArticleView):
    def get(self, request, pk: int) -> Response:
        complex_doc, simple_doc = self.documents()
        run = article_alignment.resolve_run(self.get_project(), int_param(request, "run"))
        return _with_etag(Response(article_alignment.load_alignment(request.user, self.get_article(), complex_doc,
                                                                     simple_doc, run)))

    def put(self, request, pk: int) -> Response:
        body = request.data
        if not isinstance(body, dict) or "links" not in body:
            raise article_alignment.AlignmentInputError(
                "send {\"links\": [{\"complex\": [..], \"simple\": [..], \"label\": ..}], \"removed\": [..], \"seconds\": ..}")
        complex_doc, simple_doc = self.documents()
        article = self.get_article()
        run = article_alignment.resolve_run(article.project, int_param(request, "run"))
        based_on = body.get("version", _if_match(request))
        try:  # the 409 carries the current alignment and its ETag, which only this view loads
            saved = article_alignment.save_links(request.user, article, complex_doc, simple_doc, run, body["links"],
                                                 removed=body.get("removed"), seconds=body.get("seconds", 0),
                                                 based_on=based_on, base=body.get("base"),
                                                 allow_empty=body.get("empty") is True)
        except article_alignment.AlignmentConflict as exc:
            data = article_alignment.load_alignment(request.user, article, complex_doc, simple_doc, run)
            return _with_etag(Response({"detail": str(exc), "code": "conflict", "changes": exc.changes, **data},
                                       status=status.HTTP_409_CONFLICT))
        data = article_alignment.load_alignment(request.user, article, complex_doc, simple_doc, run)
        return _with_etag(Response({"saved": saved, **data}))


@extend_schema_view(post=extend_schema(parameters=DOCUMENTS), delete=extend_schema(parameters=DOCUMENTS))
class CompletionView(ArticleView):
    """The user declares their alignment of the document pair complete (POST) or reopens it (DELETE)."""

    def post(self, request, pk: int) -> Response:
        body = request.data if isinstance(request.data, dict) else {}
        complex_doc, simple_doc = self.documents()
        article = self.get_article()
        _, created = completion.mark_complete(request.user, article, complex_doc, simple_doc,
                                              seconds=body.get("seconds", 0), allow_empty=body.get("empty") is True)
        state = article_alignment.completion_state(request.user, article.project, complex_doc, simple_doc)
        return Response({"created": created, **state}, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    def delete(self, request, pk: int) -> Response:
        complex_doc, simple_doc = self.documents()
        reopened = completion.reopen(request.user, complex_doc, simple_doc)
        state = article_alignment.completion_state(request.user, self.get_project(), complex_doc, simple_doc)
        return Response({"reopened": reopened, **state})


@extend_schema_view(get=extend_schema(parameters=DOCUMENTS), put=extend_schema(parameters=DOCUMENTS))
class ParagraphsView(ArticleView):
    def get(self, request, pk: int) -> Response:
        complex_doc, simple_doc = self.documents()
        if not paragraph_alignment.stored_links(complex_doc, simple_doc).exists():
            article_size.check_similarity(complex_doc, simple_doc)  # automatic links: an n × m matrix
        return Response(paragraph_correction.paragraph_state(self.get_article(), complex_doc, simple_doc))

    def put(self, request, pk: int) -> Response:
        if not isinstance(request.data, dict) or "links" not in request.data:
            raise article_alignment.AlignmentInputError("send {\"links\": [{\"complex\": paragraph, \"simple\": paragraph}]}")
        complex_doc, simple_doc = self.documents()
        article_size.check_similarity(complex_doc, simple_doc)  # candidates within the linked paragraphs: up to n × m
        article = self.get_article()
        saved = paragraph_correction.save_paragraph_links(request.user, article, complex_doc, simple_doc,
                                                          request.data["links"])
        data = paragraph_correction.paragraph_state(article, complex_doc, simple_doc)
        return Response({"saved": saved, **data})


class ProjectParagraphJobView(ProjectFromUrl, APIView):
    permission_classes = [IsAuthenticated & IsProjectMember & IsProjectResearcher]
    refusals = EDITOR_REFUSALS

    def post(self, request, project_pk: int) -> Response:
        candidates = request.data.get("candidates", True) if isinstance(request.data, dict) else True
        job = paragraph_alignment.start_paragraph_job(self.get_project(), request.user, candidates=bool(candidates))
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)
