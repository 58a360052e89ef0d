"""Labels: annotators submit their own; researchers read all labels of their projects."""
from __future__ import annotations

from django.db.models import Q
from rest_framework import mixins, status, viewsets
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response

from ..models import CandidatePair, Label
from ..permissions import can_annotate, researched_projects, visible_projects
from ..serializers import LabelSerializer
from ..services import labelling
from .mixins import int_param


class LabelViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    serializer_class = LabelSerializer

    def get_queryset(self):
        user = self.request.user
        qs = Label.objects.filter(
            Q(annotator=user) | Q(pair__article__project__in=researched_projects(user))
        ).select_related("annotator").order_by("id")
        pair = int_param(self.request, "pair")
        return qs.filter(pair_id=pair) if pair is not None else qs

    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        pair: CandidatePair = serializer.validated_data["pair"]
        if not CandidatePair.objects.filter(pk=pair.pk, article__project__in=visible_projects(request.user)).exists() \
                or not can_annotate(request.user, pair.article.project_id):
            raise PermissionDenied("you are not a member of this pair's project")
        data = serializer.validated_data
        try:
            label, created = labelling.submit_label(
                request.user, pair, value=data.get("value", ""), ratings=data.get("ratings") or {},
                comment=data.get("comment", ""), seconds=data.get("seconds", 0.0), client_token=data.get("client_token"),
            )
        except ValueError as exc:
            raise ValidationError({"value": str(exc)}) from exc
        return Response(self.get_serializer(label).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)
