"""The API's request parsers: one input guard in front of every view (``REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"]``).

A body that breaks the rules of :mod:`annotation.validation` is answered 400 with the problem and
where it is (``{"detail": "JSON parse error - ratings.fluency: is not valid Unicode (a lone
surrogate)"}``) before any view sees it, so nothing of it is stored:

* JSON: lone surrogates and NUL in any string or key, ``NaN``/``Infinity`` and numbers that
  overflow to infinity (``1e999``: Python's json module accepts all of them), integers outside
  signed 64 bits, nesting deeper than 64 levels, and a body that is not a JSON object (every
  operation of this API takes an object; a list or a bare value used to end in a 500).
* Forms (``application/x-www-form-urlencoded``, ``multipart/form-data``): NUL in a field name,
  a value or a file name.
"""
from __future__ import annotations

import codecs

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser

from .validation import InputError, check_text, load_json


class StrictJSONParser(JSONParser):
    """DRF's JSON parser with the checks above."""

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            return load_json(codecs.getreader(encoding)(stream))
        except InputError as exc:  # the field's own key too, as a serializer's error would have it
            detail = f"JSON parse error - {exc}"
            raise ParseError({"detail": detail, exc.field: exc.reason} if exc.field != "detail" else detail) from None


def _check_form(data, files=None) -> None:
    try:
        for key, values in data.lists():
            check_text("field name", key)
            for value in values:
                check_text(key, value)
        for key, uploads in (files.lists() if files is not None else ()):
            check_text("field name", key)
            for upload in uploads:
                check_text(f"{key} file name", upload.name or "")
    except InputError as exc:
        raise ParseError({"detail": f"Form parse error - {exc}", exc.field: exc.reason}) from None


class StrictFormParser(FormParser):
    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        _check_form(data)
        return data


class StrictMultiPartParser(MultiPartParser):
    def parse(self, stream, media_type=None, parser_context=None):
        result = super().parse(stream, media_type, parser_context)
        _check_form(result.data, result.files)
        return result
