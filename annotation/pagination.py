"""The API's list pages: keyset (cursor) pagination that takes the same time on the last page as on the first.

DRF's ``PageNumberPagination`` ran ``OFFSET n`` and a ``COUNT(*)`` on every page, so reading a list of a
million pairs page by page was quadratic. :class:`KeysetPagination` keeps the same answer —
``{count, next, previous, results}`` — but ``next`` and ``previous`` carry an opaque ``cursor``: the ordering
key of the page's last (or first) row, and the total counted once, on the first page. A later page is then
``WHERE (key) > (last key) ORDER BY key LIMIT size + 1`` — an index range scan, whatever the page — and no
count. ``count`` is the total when the first page was read (rows added since show up in the pages, not
in the count until the list is read again from the start). A view whose list has a stored total (a run's
pairs: ``AlignmentRun.pair_count``) offers it as ``known_count()`` and the first page skips the count.

Keyset needs an ordering of plain, non-null columns of the model (a foreign key by its column,
``article_id``) ending in its primary key (``id``, ``-updated_at, -id``...). A list ordered otherwise
(by a run's score, an attribute: expressions that may be null) still gets cursors, holding an offset
instead: no count per page, but ``OFFSET`` grows.

``?page=N`` (the old page numbers) still works and answers page N with its links as cursors;
``?page_size=`` (1–1000) sets the size of the pages.
"""
from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Model, Q, QuerySet
from rest_framework.exceptions import NotFound
from rest_framework.pagination import BasePagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.utils.urls import remove_query_param, replace_query_param

MAX_PAGE_SIZE = 1000
#: The largest ``OFFSET`` a cursor may carry (PostgreSQL's is a bigint; a forged cursor must not overflow it).
MAX_OFFSET = 2**62

#: A previous link to the list's first page (no cursor: it is counted again).
FIRST_PAGE: dict[str, Any] = {}


def keyset_fields(qs: QuerySet) -> list[tuple[str, bool]] | None:
    """``[(column, descending)]`` of ``qs``'s ordering when keyset pagination can follow it (plain non-null
    fields of the model, the last one its primary key), else None."""
    ordering = list(qs.query.order_by) or (list(qs.model._meta.ordering) if qs.query.default_ordering else [])
    if not ordering or not all(isinstance(term, str) for term in ordering):
        return None
    fields = []
    for term in ordering:
        name = term.lstrip("-")
        name = qs.model._meta.pk.name if name == "pk" else name
        if "__" in name or "?" in name:
            return None
        try:
            field = qs.model._meta.get_field(name)
        except FieldDoesNotExist:
            return None
        if field.null or not getattr(field, "concrete", False):
            return None
        if field.is_relation and (not field.many_to_one or name != field.attname):
            return None  # ``article`` would sort by the related model's ordering; ``article_id`` is a column
        fields.append((field.attname, term.startswith("-")))
    return fields if fields[-1][0] == qs.model._meta.pk.attname else None


def after(fields: Sequence[tuple[str, bool]], values: Sequence[Any], *, backwards: bool = False) -> Q:
    """Rows strictly after ``values`` in the ordering ``fields`` (before them when ``backwards``): the row
    comparison ``(a, b, id) > (x, y, z)`` spelled out, since the directions may differ column by column."""
    condition = Q()
    for n in range(len(fields) - 1, -1, -1):
        name, descending = fields[n]
        greater = descending == backwards  # ascending forwards, or descending backwards: the next rows are >
        step = Q(**{f"{name}__{'gt' if greater else 'lt'}": values[n]})
        condition = step if n == len(fields) - 1 else step | (Q(**{name: values[n]}) & condition)
    return condition


class KeysetPagination(BasePagination):
    """``{count, next, previous, results}`` with cursors; see the module."""

    cursor_query_param = "cursor"
    page_query_param = "page"
    page_size_query_param = "page_size"
    page_size = api_settings.PAGE_SIZE or 100

    def paginate_queryset(self, queryset: QuerySet, request: Request, view: Any = None) -> list[Any]:
        self.request = request
        self.base_url = request.build_absolute_uri()
        self.size = self.size_of(request)
        self.fields = keyset_fields(queryset)
        cursor = self.decode(request.query_params.get(self.cursor_query_param))
        page = request.query_params.get(self.page_query_param)
        self.count = cursor.get("n") if cursor else None
        if self.count is None:  # the first page (or an old ?page=N): the one count of the listing
            known = getattr(view, "known_count", None)  # a total the view keeps (a run's pair_count)
            self.count = known() if callable(known) else None
            if self.count is None:
                self.count = queryset.count()
        if cursor is None and page not in (None, "", "1"):
            offset = (self.page_number(page) - 1) * self.size
            if offset >= max(self.count, 1):  # past the last page (and no OFFSET beyond what a bigint holds)
                raise NotFound("invalid page")
            rows = list(queryset[offset:offset + self.size + 1])
            if not rows:
                raise NotFound("invalid page")
            return self.by_offset(rows, offset)
        if cursor is not None and "o" in cursor:
            offset = min(max(0, int(cursor["o"])), MAX_OFFSET)
            return self.by_offset(list(queryset[offset:offset + self.size + 1]), offset)
        if self.fields is None:
            return self.by_offset(list(queryset[:self.size + 1]), 0)
        backwards = bool(cursor and cursor.get("b"))
        if cursor and "k" in cursor:
            start = self.key_values(cursor["k"], queryset.model)
            queryset = queryset.filter(after(self.fields, start, backwards=backwards))
        if backwards:
            queryset = queryset.reverse()
        rows = list(queryset[:self.size + 1])
        more = len(rows) > self.size
        rows = rows[:self.size]
        if backwards:
            rows.reverse()
        self.rows = rows
        if backwards:  # came back from a later page: there is one after; before it, more rows or none
            self.next_cursor = {"k": self.key(rows[-1])} if rows else None
            self.previous_cursor = {"k": self.key(rows[0]), "b": 1} if more else None
        else:
            self.next_cursor = {"k": self.key(rows[-1])} if more else None
            self.previous_cursor = {"k": self.key(rows[0]), "b": 1} if rows and cursor and "k" in cursor else None
        return rows

    def by_offset(self, rows: list[Any], offset: int) -> list[Any]:
        more = len(rows) > self.size
        self.rows = rows[:self.size]
        self.next_cursor = {"o": offset + self.size} if more else None
        self.previous_cursor = ({"o": offset - self.size} if offset > self.size else FIRST_PAGE) if offset > 0 else None
        return self.rows

    def get_paginated_response(self, data: Any) -> Response:
        return Response({"count": self.count, "next": self.link(self.next_cursor),
                         "previous": self.link(self.previous_cursor), "results": data})

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "required": ["count", "results"], "properties": {
            "count": {"type": "integer", "example": 123,
                      "description": "the total, counted when the first page was read"},
            "next": {"type": "string", "nullable": True, "format": "uri"},
            "previous": {"type": "string", "nullable": True, "format": "uri"},
            "results": schema}}

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        return [{"name": self.cursor_query_param, "required": False, "in": "query",
                 "description": "the cursor a page's next or previous link carries", "schema": {"type": "string"}},
                {"name": self.page_size_query_param, "required": False, "in": "query",
                 "description": f"rows per page (1–{MAX_PAGE_SIZE})", "schema": {"type": "integer"}},
                {"name": self.page_query_param, "required": False, "in": "query",
                 "description": "a page number (OFFSET: prefer following next)", "schema": {"type": "integer"}}]

    # -- cursors --------------------------------------------------------------------------------
    def link(self, cursor: dict[str, Any] | None) -> str | None:
        if cursor is None:
            return None
        url = remove_query_param(self.base_url, self.page_query_param)
        if cursor is FIRST_PAGE:
            return remove_query_param(url, self.cursor_query_param)
        token = base64.urlsafe_b64encode(json.dumps({**cursor, "n": self.count}).encode()).decode().rstrip("=")
        return replace_query_param(url, self.cursor_query_param, token)

    def decode(self, raw: str | None) -> dict[str, Any] | None:
        if not raw:
            return None
        try:
            cursor = json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
        except (ValueError, binascii.Error):
            raise NotFound("invalid cursor") from None
        if not isinstance(cursor, dict) or not isinstance(cursor.get("n", 0), int):
            raise NotFound("invalid cursor")
        if "k" in cursor and (self.fields is None or not isinstance(cursor["k"], list)
                              or len(cursor["k"]) != len(self.fields)):
            raise NotFound("invalid cursor (the list's ordering changed)")
        if "o" in cursor and not isinstance(cursor["o"], int):
            raise NotFound("invalid cursor")
        return cursor

    def key(self, row: Model | dict[str, Any]) -> list[Any]:
        """The ordering key of ``row``: a model instance, or a ``values()`` row (a list read as rows)."""
        values = []
        for name, _ in self.fields or []:
            value = row[name] if isinstance(row, dict) else getattr(row, name)
            values.append(value.isoformat() if hasattr(value, "isoformat") else value)
        return values

    def key_values(self, raw: list[Any], model: type[Model]) -> list[Any]:
        try:
            return [model._meta.get_field(name).to_python(value) for (name, _), value in zip(self.fields or [], raw)]
        except DjangoValidationError:
            raise NotFound("invalid cursor") from None

    def size_of(self, request: Request) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        default = self.page_size
        if not raw:
            return default
        try:
            return max(1, min(MAX_PAGE_SIZE, int(raw)))
        except ValueError:
            return default

    def page_number(self, raw: str) -> int:
        try:
            number = int(raw)
        except ValueError:
            raise NotFound("invalid page") from None
        if number < 1:
            raise NotFound("invalid page")
        return number


def numbered_pages(size: int, most: int) -> type:
    """A page-number paginator (``?page=``, ``?page_size=`` up to ``most``, ``size`` by default) for the short
    lists that page by number: one declaration instead of a class per view."""
    from rest_framework.pagination import PageNumberPagination

    return type(f"NumberedPages{size}", (PageNumberPagination,),
                {"page_size": size, "page_size_query_param": "page_size", "max_page_size": most})
