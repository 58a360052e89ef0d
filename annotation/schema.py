"""The OpenAPI schema of the API (``GET /api/schema/``, drf-spectacular): what each operation takes.

Views built on a serializer describe themselves. Plain ``APIView``s that declare nothing with
``@extend_schema`` take and answer a free-form JSON object (their docstrings say which keys), and
every id in a path is an integer, so a client generator or a fuzzer (CI runs schemathesis over every
operation) can call each operation without guessing.
"""
from __future__ import annotations

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.plumbing import build_parameter_type
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, inline_serializer
from rest_framework import serializers
from rest_framework.generics import GenericAPIView

#: the largest id a path or a query parameter may carry (a signed 64-bit primary key)
MAX_ID = 2**63 - 1


def _declares_serializer(view) -> bool:
    return isinstance(view, GenericAPIView) or any(
        hasattr(view, name) for name in ("serializer_class", "get_serializer", "get_serializer_class"))


def _is_id(name: str) -> bool:
    return name in ("id", "pk") or name.endswith("_pk") or name.endswith("_id")


class AutoSchema(SpectacularAutoSchema):
    """drf-spectacular's schema with the two conventions above."""

    def _get_serializer(self):
        if not _declares_serializer(self.view):
            return None  # no "unable to guess serializer" error: the fallbacks below apply
        return super()._get_serializer()

    def get_request_serializer(self):
        serializer = super().get_request_serializer()
        if serializer is None and self.method in ("POST", "PUT", "PATCH"):
            return OpenApiTypes.OBJECT
        return serializer

    def get_response_serializers(self):
        serializer = super().get_response_serializers()
        return OpenApiTypes.OBJECT if serializer is None else serializer

    def _resolve_path_parameters(self, variables):
        ids = [v for v in variables if _is_id(v)]
        resolved = {p["name"]: p for p in super()._resolve_path_parameters([v for v in variables if v not in ids])}
        for name in ids:
            resolved[name] = build_parameter_type(name=name, location=OpenApiParameter.PATH,
                                                  schema={"type": "integer", "minimum": 0, "maximum": MAX_ID})
        return [resolved[v] for v in variables]


def ids(*names: str) -> list[OpenApiParameter]:
    """Query parameters that each take an id (``?project=3``)."""
    return [OpenApiParameter(name, int, OpenApiParameter.QUERY) for name in names]


def texts(*names: str) -> list[OpenApiParameter]:
    """Free-text query parameters."""
    return [OpenApiParameter(name, str, OpenApiParameter.QUERY) for name in names]


def flags(*names: str) -> list[OpenApiParameter]:
    """Yes/no query parameters (``1``, ``true`` or ``yes`` mean yes)."""
    return [OpenApiParameter(name, str, OpenApiParameter.QUERY, enum=["1", "0", "true", "false"]) for name in names]


PAGES = [OpenApiParameter("page", int, OpenApiParameter.QUERY), OpenApiParameter("page_size", int, OpenApiParameter.QUERY)]


#: the ``202 Accepted`` of a big project's figures that no job has computed yet (``errors.BeingComputed``)
COMPUTING = OpenApiResponse(
    response=inline_serializer("BeingComputed", {
        "status": serializers.CharField(help_text="computing"),
        "detail": serializers.CharField(help_text="what is being computed, by which job, since when"),
        "job": inline_serializer("ComputingJob", {
            "id": serializers.IntegerField(), "kind": serializers.CharField(), "status": serializers.CharField(),
            "created_at": serializers.DateTimeField(allow_null=True),
            "started_at": serializers.DateTimeField(allow_null=True)}),
        "retry_after": serializers.IntegerField(help_text="seconds; also the Retry-After header"),
    }),
    description="A big project's figures that no job has computed yet for the data as they are (issue 37): the "
                "job computing them. Ask again after Retry-After seconds; the answer is then 200.")


def computed(ok=OpenApiTypes.OBJECT) -> dict:
    """The responses of an operation whose figures a background job computes on a big project: ``ok`` (200)
    once kept, ``202`` (:data:`COMPUTING`) before."""
    return {200: ok, 202: COMPUTING}
