"""The labelling queue API: next item, submit (+ next), skip, undo, context.

Every answer that moves the annotator on carries the next item, so "label + next" is one round trip.
"""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import Assignment, Project
from ..permissions import IsProjectMember, visible_projects
from ..services import qc, queue
from .mixins import ProjectFromUrl


class SubmitInput(serializers.Serializer):
    pair = serializers.IntegerField()
    value = serializers.CharField(required=False, allow_blank=True, default="", max_length=50)
    ratings = serializers.DictField(required=False, default=dict)
    comment = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)
    seconds = serializers.FloatField(required=False, min_value=0, default=0.0)
    client_token = serializers.UUIDField(required=False, allow_null=True, default=None)


class PairInput(serializers.Serializer):
    pair = serializers.IntegerField()


def _refused(exc: ValueError) -> Response:
    if isinstance(exc, qc.AnnotatorExcluded):
        return Response({"detail": str(exc), "excluded": True}, status=status.HTTP_403_FORBIDDEN)
    code = "too_fast" if isinstance(exc, qc.LabelTooFast) else "invalid"
    return Response({"detail": str(exc), "code": code}, status=status.HTTP_400_BAD_REQUEST)


class QueueView(ProjectFromUrl, APIView):
    """``?context=1`` on any of these adds the surrounding sentences of the item."""

    permission_classes = [IsAuthenticated & IsProjectMember]

    def get_project(self) -> Project:
        if not hasattr(self, "_project"):
            projects = visible_projects(self.request.user).select_related("label_scheme")
            self._project = get_object_or_404(projects, pk=self.kwargs["project_pk"])
        return self._project

    def with_context(self) -> bool:
        return self.request.query_params.get("context", "").lower() in ("1", "true", "yes")

    def answer(self, *, pair=None, code: int = status.HTTP_200_OK, **extra) -> Response:
        try:
            data = queue.state(self.request.user, self.get_project(), with_context=self.with_context(), pair=pair)
        except ValueError as exc:
            return _refused(exc)
        return Response({**extra, **data}, status=code)


class NextItemView(QueueView):
    """``GET /api/projects/<id>/queue/next/`` → ``{item, done, message, progress, scheme, min_seconds}``."""

    def get(self, request, project_pk: int):
        return self.answer()


class SubmitView(QueueView):
    """``POST .../queue/submit/ {pair, value | ratings, comment, seconds, client_token}`` → the label and
    the next item. The same ``client_token`` twice stores one label (201 the first time, then 200)."""

    def post(self, request, project_pk: int):
        data = SubmitInput(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        try:
            label, created = queue.submit(request.user, self.get_project(), d["pair"], value=d["value"],
                                          ratings=d["ratings"], comment=d["comment"], seconds=d["seconds"],
                                          client_token=d["client_token"])
        except ValueError as exc:
            return _refused(exc)
        saved = {"id": label.pk, "pair": label.pair_id, "value": label.value, "ratings": label.ratings,
                 "client_token": str(label.client_token)}
        return self.answer(label=saved, created=created,
                           code=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class SkipView(QueueView):
    """``POST .../queue/skip/ {pair}`` → the next item; the skipped one comes back at the end."""

    def post(self, request, project_pk: int):
        data = PairInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            queue.skip(request.user, self.get_project(), data.validated_data["pair"])
        except ValueError as exc:
            return _refused(exc)
        return self.answer(skipped=data.validated_data["pair"])


class UndoView(QueueView):
    """``POST .../queue/undo/`` → deletes the annotator's latest label here; answers with that item."""

    def post(self, request, project_pk: int):
        try:
            pair = queue.undo(request.user, self.get_project())
        except ValueError as exc:
            return _refused(exc)
        return self.answer(pair=pair, undone=pair.pk)


class ContextView(QueueView):
    """``GET .../queue/context/<pair>/`` → ``{pair, context: {complex: [...], simple: [...]}}`` for a pair
    of the annotator's queue (each sentence with ``in_pair``)."""

    def get(self, request, project_pk: int, pair_pk: int):
        assignment = (Assignment.objects.filter(annotator=request.user, pair_id=pair_pk,
                                                pair__article__project=self.get_project())
                      .select_related("pair").first())
        if assignment is None:
            return Response({"detail": f"pair #{pair_pk} is not in your queue"}, status=status.HTTP_404_NOT_FOUND)
        return Response({"pair": pair_pk, "context": queue.context(assignment.pair)})
