"""Researcher-only export API: split assignment and edits, export preview, export jobs and downloads.

All under ``/api/projects/<id>/``; annotators of the project get 403, anyone else 404::

    GET  splits/                     articles per split, the policy, recent changes
    POST splits/                     {policy}: assign splits to articles without one
    PUT  splits/<article id>/        {split, override, reason}: move one article (a locked one needs override + reason)
    POST splits/unlock/              {reason}: unlock every split (logged)
    POST exports/preview/            {options}: counts per split/label and what the filters drop
    GET  exports/                    the project's exports
    POST exports/                    {options}: queue an export job (202)
    GET  exports/<id>/               status, progress, manifest and download_url once done
    GET  exports/<id>/download/      the zip
    GET  gold/rows/                  ?split=&label_policy=&options={...}: the gold rows, streamed as JSON lines,
                                     read only (no export record, no split assigned or locked)
    POST gold/rows/                  {options, lock}: the same; ``lock: true`` assigns and locks the splits first
"""
from __future__ import annotations

import json

from django.http import FileResponse, Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import Article, Export, SplitChange
from ..permissions import IsProjectResearcher, visible_projects
from ..schema import computed
from ..services import export as exporting
from ..services.export import splits
from ..services.export.filters import FilterChain
from ..services.export.gold_rows import gold_options, gold_rows, parse_options
from ..services.export.source import PairSource
from .mixins import ProjectFromUrl
from .refusals import Refusals, refuses


class ExportView(ProjectFromUrl, APIView):
    permission_classes = [IsAuthenticated & IsProjectResearcher]
    refusals = Refusals(fields={exporting.ExportError: "options"})

    def options(self, request) -> exporting.ExportOptions:
        data = request.data.get("options", request.data) if isinstance(request.data, dict) else None
        if not isinstance(data, dict):
            raise ValidationError({"options": "must be a JSON object"})
        return exporting.ExportOptions.parse(data)


def export_payload(request, export: Export) -> dict:
    job = export.job
    done = bool(export.finished_at)
    out = {
        "id": export.pk, "project": export.project_id, "kind": export.kind, "options": export.options,
        "created_at": export.created_at.isoformat(), "finished_at": export.finished_at.isoformat() if done else None,
        "pairs": export.pair_count,
        "status": job.status if job else ("succeeded" if done else "running"),
        "progress": job.progress if job else (100.0 if done else 0.0),
        "message": job.message if job else "", "error": job.error if job else "",
        "job": job.pk if job else None,
        "download_url": (request.build_absolute_uri(reverse("export-download", args=[export.project_id, export.pk]))
                         if done and export.archive else None),
    }
    if done:
        out["counts"] = export.manifest.get("counts")
        out["dropped"] = export.manifest.get("dropped")
        out["dropped_training"] = export.manifest.get("dropped_training", {})
        out["left_out"] = export.manifest.get("left_out", {})
    return out


class SplitsView(ExportView):
    def get(self, request, project_pk: int):
        project = self.get_project()
        changes = (SplitChange.objects.filter(article__project=project).select_related("article", "user")
                   .order_by("-id")[:50])
        return Response({
            "counts": splits.counts(project), "policy": splits.project_policy(project).as_dict(),
            "locked": project.articles.filter(split__locked=True).count(),
            "changes": [{"article": c.article.title, "from": c.old_name, "to": c.new_name, "override": c.override,
                         "reason": c.reason, "user": c.user.username if c.user else None,
                         "at": c.created_at.isoformat()} for c in changes],
        })

    @refuses(fields={splits.SplitError: "policy"})
    def post(self, request, project_pk: int):
        project = self.get_project()
        policy = splits.validate_policy(request.data.get("policy", None) if isinstance(request.data, dict) else None)
        return Response(splits.assign(project, policy, user=request.user))


class ArticleSplitView(ExportView):
    refusals = Refusals(fields={splits.SplitLocked: None, splits.SplitError: "split"})  # locked: 409 {"detail"}

    def put(self, request, project_pk: int, article_pk: int):
        project = self.get_project()
        article = get_object_or_404(Article, pk=article_pk, project=project)
        name = request.data.get("split")
        override = request.data.get("override", False)
        if not isinstance(override, bool):
            raise ValidationError({"override": "must be true or false"})
        split = splits.set_split(article, name or None, user=request.user, override=override,
                                 reason=str(request.data.get("reason", "")))
        return Response({"article": article.pk, "split": split.name if split else None,
                         "locked": split.locked if split else False, "origin": split.origin if split else None})

    patch = put


class UnlockSplitsView(ExportView):
    refusals = Refusals(fields={splits.SplitError: "reason"})

    def post(self, request, project_pk: int):
        n = splits.unlock(self.get_project(), user=request.user, reason=str(request.data.get("reason", "")))
        return Response({"unlocked": n})


class PreviewView(ExportView):
    @extend_schema(responses=computed())
    def post(self, request, project_pk: int):
        # a big project's first gold preview: 202 while the export-preview job computes it (BeingComputed)
        return Response(exporting.preview(self.get_project(), self.options(request), visible=visible_projects(request.user),
                                          background=True))


class ExportListView(ExportView):
    @extend_schema(operation_id="projects_exports_list")
    def get(self, request, project_pk: int):
        exports = Export.objects.filter(project=self.get_project()).select_related("job").order_by("-id")[:50]
        return Response({"results": [export_payload(request, e) for e in exports]})

    def post(self, request, project_pk: int):
        project = self.project
        options = self.options(request)
        # fail fast on options the job could not honour
        PairSource(project, options)
        FilterChain(project, options, visible=visible_projects(request.user))
        export = exporting.start_export(project, options, user=request.user)
        payload = export_payload(request, export)
        payload["status_url"] = request.build_absolute_uri(reverse("export-detail", args=[project.pk, export.pk]))
        return Response(payload, status=status.HTTP_202_ACCEPTED)


class ExportDetailView(ExportView):
    def get(self, request, project_pk: int, pk: int):
        export = get_object_or_404(Export.objects.select_related("job"), pk=pk, project=self.get_project())
        payload = export_payload(request, export)
        if export.finished_at:
            payload["manifest"] = export.manifest
        return Response(payload)


class DownloadView(ExportView):
    def get(self, request, project_pk: int, pk: int):
        export = get_object_or_404(Export, pk=pk, project=self.get_project())
        path = exporting.archive_path(export)
        if path is None or not path.is_file():
            raise Http404("this export has no archive (yet)")
        return FileResponse(open(path, "rb"), as_attachment=True, filename=path.name,  # noqa: SIM115 - FileResponse closes it
                            content_type="application/zip")


class GoldRowsView(ExportView):
    """The gold as JSON lines (``application/x-ndjson``, one ``jsonl`` export record a line, ``split`` in each),
    streamed a chunk of articles at a time: reading the gold writes nothing unless ``lock`` is asked
    (``services/export/gold_rows.py``)."""

    #: rows per written chunk of the answer (one write per row would cost more than the row)
    CHUNK = 500

    @extend_schema(responses={(200, "application/x-ndjson"): str})
    def get(self, request, project_pk: int):
        raw = parse_options(request.query_params.get("options"))
        wanted = [s for value in request.query_params.getlist("split") for s in value.split(",") if s]
        if wanted:
            raw["splits"] = wanted
        if request.query_params.get("label_policy"):
            raw["label_policy"] = request.query_params["label_policy"]
        return self.stream(request, gold_options(raw), lock=False)

    def post(self, request, project_pk: int):
        data = request.data if isinstance(request.data, dict) else None
        if data is None or not isinstance(data.get("options", {}), dict):
            raise ValidationError({"options": "must be a JSON object"})
        lock = data.get("lock", False)
        if not isinstance(lock, bool):
            raise ValidationError({"lock": "must be true or false"})
        return self.stream(request, gold_options(data.get("options", {})), lock=lock)

    def stream(self, request, options: exporting.ExportOptions, *, lock: bool) -> StreamingHttpResponse:
        rows = gold_rows(self.get_project(), options, lock=lock, user=request.user,
                         visible=visible_projects(request.user))

        def lines():
            chunk = []
            for row in rows:
                chunk.append(json.dumps(row, ensure_ascii=False, default=str))
                if len(chunk) >= self.CHUNK:
                    yield "\n".join(chunk) + "\n"
                    chunk = []
            if chunk:
                yield "\n".join(chunk) + "\n"

        return StreamingHttpResponse(lines(), content_type="application/x-ndjson")
