"""The API's one exception handler (``REST_FRAMEWORK["EXCEPTION_HANDLER"]``): it answers the services'
refusals (:class:`annotation.errors.DomainError`) so no view catches them.

The error carries its status, code and body (:meth:`DomainError.payload`). A view that answers some
refusal differently says so once, in its ``refusals = Refusals(...)`` declaration (or one handler of
it, decorated with ``@refuses(...)``): the input an error is about (DRF's field shape,
``{"mode": message}``), another status for one class, the code of a refusal whose class has none, and the
editors' ``errors`` list. Any other exception (a plain ``ValueError`` included) is no refusal: a bug, a 500.
"""
from __future__ import annotations

from rest_framework import status as http
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from workers.engine import OptionError

from ..errors import BeingComputed, DomainError


class Refusals:
    """How a view answers refusals; every part optional (checked in the order given).

    * ``fields``: ``{error class: input name}``: a 400 ``{name: message}``; ``None`` keeps the
      error's own body (to exempt a subclass of a class listed after it).
    * ``status``: ``{error class: HTTP status}`` instead of the class's.
    * ``code``: the ``code`` of a refusal whose class has none.
    * ``listed``: a 400 also lists its messages under ``errors`` (the article editors' shape).
    """

    def __init__(self, *, fields: dict[type[Exception], str | None] | None = None,
                 status: dict[type[Exception], int] | None = None, code: str | None = None,
                 listed: bool = False) -> None:
        self.fields = fields or {}
        self.status = status or {}
        self.code = code
        self.listed = listed

    def is_refusal(self, exc: Exception) -> bool:
        return isinstance(exc, DomainError | OptionError)

    def answer(self, exc: Exception) -> Response | None:
        """The response to ``exc``, or None when it is no refusal here (DRF's handler, or a 500)."""
        if not self.is_refusal(exc):
            return None
        for cls, name in self.fields.items():
            if isinstance(exc, cls):
                if name is None:
                    break
                message = exc.field_message() if isinstance(exc, DomainError) else str(exc)
                return Response({name: message}, status=http.HTTP_400_BAD_REQUEST)
        body = _payload(exc)
        code = next((code for cls, code in self.status.items() if isinstance(exc, cls)),
                    getattr(exc, "status", http.HTTP_400_BAD_REQUEST))
        if self.code and "code" not in body and "detail" in body:
            body["code"] = self.code
        if self.listed and code == http.HTTP_400_BAD_REQUEST and "errors" not in body:
            body["errors"] = [str(exc)]
        return Response(body, status=code)


def _payload(exc: Exception) -> dict:
    if isinstance(exc, DomainError):
        return exc.payload()
    if isinstance(exc, OptionError):  # the engine's (Django-free) error: each bad option and the valid ones
        return {"detail": str(exc), "params": exc.problems, "valid_options": exc.valid}
    return {"detail": str(exc)}


DEFAULT = Refusals()


def refuses(**declared):
    """Declares the :class:`Refusals` of one handler method (``get``, ``post``, a viewset action)."""
    def declare(handler):
        handler.refusals = Refusals(**declared)
        return handler
    return declare


def _refusals(context: dict) -> Refusals:
    view, request = context.get("view"), context.get("request")
    name = getattr(view, "action", None) or (request.method.lower() if request is not None else "")
    handler = getattr(view, name, None) if name else None
    return getattr(handler, "refusals", None) or getattr(view, "refusals", None) or DEFAULT


def exception_handler(exc: Exception, context: dict) -> Response | None:
    """DRF's handler, after the handler's, the view's or the default :class:`Refusals` answered what is theirs.

    :class:`~annotation.errors.BeingComputed` is no refusal: ``202 Accepted`` with its body and ``Retry-After``, and
    nothing rolled back (the job it started is committed, then sent)."""
    if isinstance(exc, BeingComputed):
        return Response(exc.payload(), status=http.HTTP_202_ACCEPTED, headers={"Retry-After": str(exc.retry_after_s)})
    refusals = _refusals(context)
    response = refusals.answer(exc)
    if response is None:
        return drf_exception_handler(exc, context)
    set_rollback()
    return response
