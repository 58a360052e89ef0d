"""Articles, documents (with sentences) and corpus upload."""
from __future__ import annotations

from dataclasses import asdict

from django.db.models import Count
from rest_framework import status, viewsets
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import Article, Document
from ..permissions import IsProjectResearcher, visible_projects
from ..serializers import ArticleSerializer, DocumentDetailSerializer, DocumentSerializer
from ..services.corpus import importing
from .mixins import ProjectFromUrl, int_param


class ArticleViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = ArticleSerializer

    def get_queryset(self):
        qs = Article.objects.filter(project__in=visible_projects(self.request.user))
        qs = qs.prefetch_related("documents").order_by("id")
        project = int_param(self.request, "project")
        return qs.filter(project_id=project) if project is not None else qs


class DocumentViewSet(viewsets.ReadOnlyModelViewSet):
    def get_serializer_class(self):
        return DocumentDetailSerializer if self.action == "retrieve" else DocumentSerializer

    def get_queryset(self):
        qs = Document.objects.filter(article__project__in=visible_projects(self.request.user))
        qs = qs.annotate(sentence_count=Count("sentences")).order_by("article_id", "rank")
        if self.action == "retrieve":
            qs = qs.prefetch_related("sentences__paragraph")
        article = int_param(self.request, "article")
        return qs.filter(article_id=article) if article is not None else qs


class CorpusUploadView(ProjectFromUrl, APIView):
    """``POST /api/projects/<id>/import/`` with one or more ``files`` (multipart) and ``format``.

    All-or-nothing: a bad file imports nothing and the response lists every problem found.
    """

    parser_classes = [MultiPartParser, FormParser]
    permission_classes = [IsAuthenticated & IsProjectResearcher]

    def post(self, request, project_pk: int):
        project = self.get_project()
        uploads = request.FILES.getlist("files") or request.FILES.getlist("file")
        if not uploads:
            return Response({"detail": "no file uploaded (send multipart field 'files')"}, status=status.HTTP_400_BAD_REQUEST)
        try:
            files = uploaded_files(uploads)
            result = importing.import_files(project, files, request.data.get("format", "auto"),
                                            language=request.data.get("language") or None,
                                            on_conflict=request.data.get("on_conflict", "error"),
                                            source=", ".join(u.name for u in uploads)[:200])
        except importing.CorpusImportError as exc:
            return Response({"detail": "nothing was imported", "problems": [str(p) for p in exc.problems]},
                            status=status.HTTP_400_BAD_REQUEST)
        return Response(asdict(result), status=status.HTTP_201_CREATED)


def uploaded_files(uploads) -> list[tuple[str, bytes]]:
    """Uploaded files as (name, bytes); the importer unpacks archives itself."""
    return [(upload.name, upload.read()) for upload in uploads]
