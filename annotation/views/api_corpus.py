"""Articles, documents (with sentences) and corpus upload."""
from __future__ import annotations

from django.db.models import Count
from django.urls import reverse
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import status, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import Article, Document
from ..parsers import StrictFormParser, StrictMultiPartParser
from ..permissions import IsProjectResearcher, visible_projects
from ..requests import json_schema
from ..schema import ids
from ..serializers import ArticleSerializer, DocumentDetailSerializer, DocumentSerializer, JobSerializer
from ..services.corpus import article_size, importing
from ..services.corpus.importing import uploads as uploads_service
from ..services.corpus.importing.request import IMPORT_OPTIONS, ImportRequest, import_options
from .mixins import ProjectFromUrl, int_param


@extend_schema_view(list=extend_schema(parameters=ids("project")))
class ArticleViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = ArticleSerializer

    def get_queryset(self):
        qs = Article.objects.filter(project__in=visible_projects(self.request.user))
        qs = qs.prefetch_related("documents").order_by("id")
        project = int_param(self.request, "project")
        return qs.filter(project_id=project) if project is not None else qs


@extend_schema_view(list=extend_schema(parameters=ids("article")))
class DocumentViewSet(viewsets.ReadOnlyModelViewSet):
    """Documents; one document's sentences come a page at a time (``?offset=&limit=``, at most
    ``ARTICLE_MAX_SENTENCES`` per response; ``next_offset`` is null on the last page)."""

    def get_serializer_class(self):
        return DocumentDetailSerializer if self.action == "retrieve" else DocumentSerializer

    def get_queryset(self):
        qs = Document.objects.filter(article__project__in=visible_projects(self.request.user))
        qs = qs.annotate(sentence_count=Count("sentences")).order_by("article_id", "rank", "id")  # id: keyset pages
        article = int_param(self.request, "article")
        return qs.filter(article_id=article) if article is not None else qs

    @extend_schema(parameters=ids("offset", "limit"))
    def retrieve(self, request, *args, **kwargs):
        document = self.get_object()
        most = article_size.max_sentences()
        offset, limit = int_param(request, "offset") or 0, int_param(request, "limit") or most
        if offset < 0:
            raise ValidationError({"offset": "must be 0 or more"})
        limit = max(1, min(limit, most))
        document.page_sentences = list(document.sentences.select_related("paragraph").order_by("index")[offset:offset + limit])
        document.offset = offset
        document.next_offset = offset + limit if offset + limit < document.sentence_count else None
        return Response(self.get_serializer(document).data)


UPLOAD = {"type": "object", "required": ["files"], "properties": {
    "files": {"type": "array", "items": {"type": "string", "format": "binary"}},
    "paths": {"type": "array", "items": {"type": "string"},
              "description": "a folder: each file's relative path (e.g. hf/train/state.json), in the order of files"},
    **json_schema(import_options())}}


class CorpusUploadView(ProjectFromUrl, APIView):
    """``POST /api/projects/<id>/import/`` with one or more ``files`` (multipart) and ``format``; a folder
    as one ``paths`` item per file (its relative path, in the order of ``files``), so it stays a folder.

    All-or-nothing: a bad file imports nothing and the response lists every problem found (400; 413
    when over a size limit, named in the problem). An upload up to ``IMPORT_BACKGROUND_BYTES`` is
    imported now (201, the counts); a larger one becomes an ``import`` job (202, ``job`` and
    ``status_url`` to poll: ``progress``, then ``result`` or ``error`` with ``result.problems``).
    """

    parser_classes = [StrictMultiPartParser, StrictFormParser]
    permission_classes = [IsAuthenticated & IsProjectResearcher]

    @extend_schema(request={"multipart/form-data": UPLOAD})
    def post(self, request, project_pk: int):
        project = self.project
        uploads = request.FILES.getlist("files") or request.FILES.getlist("file")
        cut_off = uploads_service.upload_problem(request)
        if cut_off is not None:
            raise importing.CorpusImportError(cut_off)
        if not uploads:
            return Response({"detail": "no file uploaded (send multipart field 'files')"}, status=status.HTTP_400_BAD_REQUEST)
        options = ImportRequest.parse({o.name: request.data.get(o.name) for o in IMPORT_OPTIONS
                                       if o.name in request.data}, text=True)
        received = uploads_service.receive(project, uploads, options, user=request.user,
                                           paths=request.data.getlist("paths") if hasattr(request.data, "getlist")
                                           else None)
        if received.job is not None:
            job = received.job
            return Response({"detail": f"the import runs in the background as job #{job.pk}",
                             "job": JobSerializer(job).data, "status_url": reverse("job-detail", args=[job.pk])},
                            status=status.HTTP_202_ACCEPTED)
        # the same counts as a background import's job result (``summary`` too), plus the new articles' ids
        return Response({**uploads_service.result_data(received.result), "article_ids": received.result.article_ids},
                        status=status.HTTP_201_CREATED)

