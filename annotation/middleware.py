"""The request guard for pages and API alike (``MIDDLEWARE``), before any view runs:

* an id in the path (``<int:pk>``, a router's ``{id}``) past 64 bits answers 404: no such object
  can exist, and SQLite overflows on it (``OverflowError``, a 500) where PostgreSQL would not;
* a NUL character in the query string, or in a page's form post (a field, a value or a file name),
  answers 400 naming the field: PostgreSQL refuses NUL in text, so a filter or a saved setting with
  one would fail inside the view. (Percent-encoded bytes that are not UTF-8 arrive as U+FFFD, so no
  lone surrogate can come this way; the API's bodies are checked by its parsers,
  :mod:`annotation.parsers`. A page's form is parsed here as ``CsrfViewMiddleware`` parses it anyway,
  with the same upload handlers.)
"""
from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponseBadRequest, JsonResponse

from .validation import InputError, check_text, int_in_range

FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


def _is_id(name: str, value) -> bool:
    return name in ("pk", "id") or name.endswith(("_pk", "_id")) or isinstance(value, int)


def _out_of_range(value) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return not int_in_range(value)
    text = str(value)
    digits = text[1:] if text.startswith("-") else text
    if not (digits.isascii() and digits.isdigit()):
        return False  # not a number at all: the lookup finds nothing, as for any other unknown id
    return len(digits) > 19 or not int_in_range(int(text))


def _fields(request: HttpRequest):
    yield from request.GET.lists()
    if request.method == "POST" and request.content_type in FORMS and not request.path.startswith("/api/"):
        yield from request.POST.lists()
        for key, uploads in request.FILES.lists():
            yield key, [upload.name or "" for upload in uploads]


class RequestGuardMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest):
        try:
            for key, values in _fields(request):
                check_text("parameter name", key)
                for value in values:
                    check_text(key, value)
        except InputError as exc:
            if request.path.startswith("/api/"):  # DRF's shape: the field with its message, and a detail
                return JsonResponse({"detail": str(exc), exc.field: exc.reason}, status=400)
            return HttpResponseBadRequest(f"Bad request: {exc}", content_type="text/plain; charset=utf-8")
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs) -> None:
        for name, value in view_kwargs.items():
            if _is_id(name, value) and _out_of_range(value):
                raise Http404(f"No object has {name} {str(value)[:40]}.")
        for value in view_args:
            if isinstance(value, int) and _out_of_range(value):
                raise Http404("No such object.")
