"""The API's request parsers: one input guard in front of every view (``REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"]``).

JSON text from outside is loaded here, once (:func:`load_json`: the API's bodies, the pages' and the CLI's JSON
options). A body that breaks the rules of :mod:`annotation.validation` is answered 400 with the problem and
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
import json
import math
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser

from .validation import InputError, check_text, first_problem, problem_error


def _constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"number {text[:30]} out of range (not finite)")
    return value


def load_json(source, *, what: str = "body", require_object: bool = True) -> Any:
    """JSON text (a string or a text stream) parsed and checked (:func:`json_problem`); with
    ``require_object``, a JSON object. Python's json module alone takes ``NaN``, ``Infinity`` and
    ``1e999`` (as infinity); this refuses them. Raises :class:`InputError`.

    >>> load_json('{"threshold": 1e999}')
    Traceback (most recent call last):
    ...
    annotation.validation.InputError: body: number 1e999 out of range (not finite)
    """
    reader = json.loads if isinstance(source, str) else json.load
    field = "detail" if what == "body" else what
    try:
        data = reader(source, parse_constant=_constant, parse_float=_finite_float)
    except RecursionError:
        raise InputError(f"{what}: nested too deeply", field=field) from None
    except ValueError as exc:  # JSONDecodeError, undecodable bytes, an integer of thousands of digits
        raise InputError(f"{what}: {exc}", field=field) from None
    found = first_problem(data)
    if found:
        raise problem_error(found, what)
    if require_object and not isinstance(data, dict):
        raise InputError(f"{what}: must be a JSON object, not {_json_type(data)}", field=field)
    return data


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


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
