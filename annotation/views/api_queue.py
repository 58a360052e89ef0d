"""The labelling queue API: next item, submit (+ next), skip, undo, context.

Every answer that moves the annotator on carries the next item, so "label + next" is one round trip.
"""
from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import Assignment, Project
from ..schema import flags
from ..serializers import MAX_ID, PairInput, SubmitInput
from ..services.review import annotator, labelling, queue, queue_items
from ..services.review.annotator import Annotator
from ..services.review.label_input import LabelInput
from .refusals import Refusals


class IsQueueMember(BasePermission):
    """Members of the URL's project (any role) and admins; anyone else gets 404, as if it did not exist."""

    def has_permission(self, request, view) -> bool:
        view.get_seat()
        return True


class QueueView(APIView):
    """``?context=1`` on any of these adds the surrounding sentences of the item.

    Lean on purpose (the labelling loop's latency): one query for the project and the membership,
    JSON only, no pagination."""

    permission_classes = [IsAuthenticated, IsQueueMember]
    renderer_classes = [JSONRenderer]
    body_error = None  # a body that did not parse while the token's authentication read the seat's pair
    # as the labels API, except that a pair outside the annotator's queue is a bad request here (400:
    # the client asked for an item the queue did not give it), as it always was
    refusals = Refusals(code="invalid", status={labelling.NotServed: status.HTTP_400_BAD_REQUEST})

    def finalize_response(self, request, response, *args, **kwargs):
        # Back/Forward and a second tab must never show a stale item from the browser's cache.
        response = super().finalize_response(request, response, *args, **kwargs)
        response["Cache-Control"] = "no-store"
        return response

    def preload_seat(self, seat: Annotator | None) -> None:
        """The seat as the token's authentication read it with the token (None: not theirs to see; issue 37,
        ``annotation.authentication.ExpiringTokenAuthentication``)."""
        self._preloaded = (seat,)

    def get_seat(self) -> Annotator:
        if not hasattr(self, "_seat"):
            if self.body_error is not None:  # refused once the token is known good (a 401 comes first)
                raise self.body_error
            preloaded = getattr(self, "_preloaded", None)
            seat = (preloaded[0] if preloaded is not None
                    else annotator.load(self.request.user, self.kwargs["project_pk"], **self.seat_counts()))
            if seat is None:
                raise Http404("No Project matches the given query.")
            self._seat = seat
        return self._seat

    def seat_counts(self) -> dict:
        """What :func:`annotator.load` reads besides the seat (a submit: the annotator's counts)."""
        return {}

    def get_project(self) -> Project:
        return self.get_seat().project

    def with_context(self) -> bool:
        return self.request.query_params.get("context", "").lower() in ("1", "true", "yes")

    def answer(self, *, pair=None, code: int = status.HTTP_200_OK, **extra) -> Response:
        data = queue.state(self.get_seat(), with_context=self.with_context(), pair=pair)
        return Response({**extra, **data}, status=code)


class NextItemView(QueueView):
    """``GET /api/projects/<id>/queue/next/`` → ``{item, done, message, progress, scheme, min_seconds}``."""

    @extend_schema(parameters=flags("context"))
    def get(self, request, project_pk: int):
        return self.answer()


class SubmitView(QueueView):
    """``POST .../queue/submit/ {pair, value | ratings, comment, seconds, client_token}`` → the label and
    the next item. The same ``client_token`` twice stores one label (201 the first time, then 200)."""

    _counted_pair = None

    def seat_counts(self) -> dict:
        # The annotator's counts and their assignment of the pair come with the seat's query (issue 37: one
        # statement fewer); a body that names no valid pair is refused by its validation below.
        # A body that does not parse is refused here, before the seat: a 400 whatever the project (it says
        # nothing about the project; a valid body from outside still gets the 404).
        data = self.request.data
        pair = data.get("pair") if isinstance(data, dict) else None
        if isinstance(pair, int) and not isinstance(pair, bool) and 0 < pair <= MAX_ID:
            self._counted_pair = pair
            return {"counts": True, "pair_id": pair}
        return {}

    @extend_schema(request=SubmitInput, parameters=flags("context"))
    def post(self, request, project_pk: int):
        data = SubmitInput(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        seat = self.get_seat()
        label_input = LabelInput.from_data(seat.project.label_scheme, d)
        mine = seat.mine if self._counted_pair == d["pair"] else None
        label, created, state = queue.submit_and_next(seat, d["pair"], label_input, with_context=self.with_context(),
                                                      mine=mine)
        saved = {"id": label.pk, "pair": label.pair_id, "value": label.value, "ratings": label.ratings,
                 "client_token": str(label.client_token)}
        return Response({"label": saved, "created": created, **state},
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class SkipView(QueueView):
    """``POST .../queue/skip/ {pair}`` → the next item; the skipped one comes back at the end."""

    @extend_schema(request=PairInput, parameters=flags("context"))
    def post(self, request, project_pk: int):
        data = PairInput(data=request.data)
        data.is_valid(raise_exception=True)
        queue.skip(request.user, self.get_project(), data.validated_data["pair"])
        return self.answer(skipped=data.validated_data["pair"])


class UndoView(QueueView):
    """``POST .../queue/undo/`` → deletes the annotator's latest label here; answers with that item."""

    @extend_schema(request=None, parameters=flags("context"))
    def post(self, request, project_pk: int):
        pair = queue.undo(self.get_seat())
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
        return Response({"pair": pair_pk, "context": queue_items.context(assignment.pair)})
