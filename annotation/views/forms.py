"""The page views' one form-error path (issue 38, item 5): a view raises the service's refusal (a
:class:`~annotation.errors.DomainError`, or its own check of the form raised as one) and declares once how
a refusal is answered — the form re-rendered with what was submitted and the error, with the error's own
status (:func:`refuses_with`), or, for an action button, the error as a message on the page it came from
(:func:`back_with_message`). No page view catches a refusal itself (``tests/test_repository_views.py``).
"""
from __future__ import annotations

import functools
from collections.abc import Callable

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from ..errors import DomainError

Answer = Callable[..., HttpResponse]
"""``answer(request, error, *args, **kwargs)``: the response to a refused form (the view's own arguments)."""


def refuses_with(answer: Answer, *, also: tuple[type[Exception], ...] = ()
                 ) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """Declares a page view's answer to a refusal: a :class:`DomainError` raised inside the view is
    answered by ``answer(request, error, *args, **kwargs)``; anything else propagates (a bug stays a 500).
    ``also``: other exceptions that are refusals of this view (the run form's ``validation.InputError``: its
    params field's JSON, parsed by the view), answered alike (400).

    Example::

        @refuses_with(lambda request, error, project: _render(request, project, error=error))
        def save_guidelines(request, project): ...
    """

    def declare(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @functools.wraps(view)
        def page(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            try:
                return view(request, *args, **kwargs)
            except (DomainError, *also) as error:
                return answer(request, error, *args, **kwargs)
        return page
    return declare


def back_with_message(to: str, *, prefix: str = "", pk_of: Callable[..., int] | None = None) -> Answer:
    """The answer of an action button: the refusal as an error message, then back to the page named ``to``
    (with ``pk_of(*view args)`` as its ``pk`` when the page needs one)."""

    def answer(request: HttpRequest, error: Exception, *args, **kwargs) -> HttpResponse:
        messages.error(request, f"{prefix}{error}")
        return redirect(to, pk=pk_of(*args, **kwargs)) if pk_of else redirect(to)
    return answer
