"""Labels: annotators submit and edit their own; researchers read all labels of their projects.

* ``POST /api/labels/ {pair, value | ratings, comment, seconds, client_token, change}`` — through the
  same gate as the queue (``services.labelling``): 201 new, 200 the stored label (same token or
  same content), 409 with the stored label when the pair was labelled before with other content
  and ``change`` is not true, 403 when the pair was not served to the user, 400 for bad input.
* ``GET /api/labels/?mine=1&value=&article=&project=&since=&until=&q=`` — filters ("My labels");
  ``q`` searches the pair's sentences and the comment.
* ``PATCH /api/labels/<id>/ {value | ratings, comment}`` — the annotator edits their own label;
  the old value goes into the history. ``GET /api/labels/<id>/history/`` lists it.
"""
from __future__ import annotations

from django.db.models import Exists, OuterRef, Q
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.response import Response

from ..models import CandidatePair, Label, LabelChange, PairSentence
from ..permissions import annotator_only_projects, researched_projects, visible_projects
from ..schema import flags, ids, texts
from ..serializers import LabelEdit, LabelSerializer, MyLabelSerializer
from ..services.review import annotator, labelling
from ..services.review.label_input import LabelInput
from .mixins import date_param, int_param, text_param
from .refusals import Refusals

MAX_QUERY_CHARS = 200


def _mine(request) -> bool:
    return request.query_params.get("mine", "").lower() in ("1", "true", "yes")


@extend_schema_view(list=extend_schema(parameters=flags("mine") + ids("pair", "article", "project")
                                       + texts("value", "since", "until", "q")),
                    partial_update=extend_schema(request=LabelEdit))
class LabelViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    serializer_class = LabelSerializer
    # the gate's refusals (labelling, qc, a bad stored project config) with their own status and code; a refusal
    # whose class has no code (a bad label value) is a 400 "invalid"
    refusals = Refusals(code="invalid")

    def get_serializer_context(self):
        context = super().get_serializer_context()
        context["annotator_only_projects"] = annotator_only_projects(self.request.user)
        return context

    def get_serializer_class(self):
        if (self.action == "list" and _mine(self.request)) or self.action == "partial_update":
            return MyLabelSerializer
        return LabelSerializer

    def get_queryset(self):
        user = self.request.user
        # one's own labels only in projects one is still a member of: a removed member reads and edits
        # nothing there (404, like any pair of a project they are not in)
        qs = Label.objects.filter(
            Q(annotator=user, pair__article__project__in=visible_projects(user))
            | Q(pair__article__project__in=researched_projects(user))
        ).select_related("annotator", "pair__article").order_by("id")
        if self.action != "list":
            return qs
        return self.filtered(qs)

    def filtered(self, qs):
        request = self.request
        params = request.query_params
        if _mine(request):
            qs = (qs.filter(annotator=request.user).prefetch_related("pair__members__sentence")
                  .order_by("-updated_at", "-id"))
        for name, field in (("pair", "pair_id"), ("article", "pair__article_id"), ("project", "pair__article__project_id")):
            value = int_param(request, name)
            if value is not None:
                qs = qs.filter(**{field: value})
        if params.get("value"):
            qs = qs.filter(value=text_param(request, "value", labelling.MAX_VALUE_CHARS))
        since, until = date_param(request, "since"), date_param(request, "until", end=True)
        if since is not None:
            qs = qs.filter(updated_at__gte=since)
        if until is not None:
            qs = qs.filter(updated_at__lte=until)
        if params.get("q"):
            q = text_param(request, "q", MAX_QUERY_CHARS)
            in_text = PairSentence.objects.filter(pair=OuterRef("pair_id"), sentence__text__icontains=q)
            qs = qs.filter(Q(comment__icontains=q) | Exists(in_text) | Q(pair__article__title__icontains=q))
        return qs

    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        # a pair of a project the user is not in is "not found", exactly like a pair that does not exist
        serializer.fields["pair"].queryset = CandidatePair.objects.filter(article__project__in=visible_projects(request.user))
        if not serializer.is_valid():
            if any(getattr(e, "code", "") == "does_not_exist" for e in serializer.errors.get("pair", ())):
                raise NotFound({"pair": f"pair {request.data.get('pair')!r} not found"})
            raise ValidationError(serializer.errors)
        pair: CandidatePair = serializer.validated_data["pair"]  # of a project the user labels in (visible_projects)
        actor = annotator.load(request.user, pair.article.project_id)  # None: not a member (can_annotate's rule)
        if actor is None:
            raise PermissionDenied("you are not a member of this pair's project")
        label_input = LabelInput.from_data(actor.project.label_scheme, serializer.validated_data)
        label, created = labelling.submit_label(actor, pair, label_input)
        return Response(self.get_serializer(label).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    def partial_update(self, request, *args, **kwargs):
        label = self.get_object()
        if label.annotator_id != request.user.pk:
            raise PermissionDenied("you can only edit your own labels")
        edit = LabelEdit(data=request.data)
        edit.is_valid(raise_exception=True)
        project = label.pair.article.project
        label = labelling.edit_label(annotator.of(request.user, project), label,
                                     LabelInput.from_data(project.label_scheme, edit.validated_data, editing=label))
        return Response(self.get_serializer(label).data)

    @action(detail=True, methods=["get"])
    def history(self, request, pk=None):
        label = self.get_object()
        rows = LabelChange.objects.filter(pair_id=label.pair_id, annotator_id=label.annotator_id).select_related("changed_by")
        if not rows.exists() and label is None:
            raise NotFound()
        return Response([{"old_value": r.old_value, "old_ratings": r.old_ratings, "old_comment": r.old_comment,
                          "new_value": r.new_value, "new_ratings": r.new_ratings, "new_comment": r.new_comment,
                          "source": r.source, "changed_by": r.changed_by.username if r.changed_by else None,
                          "at": r.created_at.isoformat()} for r in rows])
