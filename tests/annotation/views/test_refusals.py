"""The API's one exception handler (``annotation/views/refusals.py``): a domain error answers its own
status, code and body; a view's declaration changes what it says it changes, nothing else."""
from __future__ import annotations

import pytest
from rest_framework.permissions import AllowAny
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from annotation.errors import DomainError, ListedError
from annotation.views.refusals import Refusals, refuses


class Taken(DomainError):
    status, code = 409, "taken"


class Raising(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]
    error: Exception = Taken("the name is taken")

    def get(self, request):
        raise self.error

    @refuses(fields={Taken: "name"})
    def post(self, request):
        raise self.error


def answer(view: type[APIView], method: str = "get", **attrs):
    request = getattr(APIRequestFactory(), method)("/")
    response = type("View", (view,), attrs).as_view()(request)
    return response.status_code, response.data


def test_a_domain_error_answers_its_own_status_and_code():
    assert answer(Raising) == (409, {"detail": "the name is taken", "code": "taken"})
    assert answer(Raising, error=DomainError("no")) == (400, {"detail": "no"})
    assert answer(Raising, error=ListedError(["a", "b"])) == (400, {"detail": "a; b", "errors": ["a", "b"]})


def test_a_view_declares_the_input_an_error_is_about_another_status_and_a_default_code():
    assert answer(Raising, refusals=Refusals(fields={Taken: "name"})) == (400, {"name": "the name is taken"})
    assert answer(Raising, refusals=Refusals(status={Taken: 400})) == (400, {"detail": "the name is taken", "code": "taken"})
    no_code = answer(Raising, error=DomainError("no"), refusals=Refusals(code="invalid", listed=True))
    assert no_code == (400, {"detail": "no", "code": "invalid", "errors": ["no"]})


def test_a_handler_declares_its_own_refusals():
    assert answer(Raising, "post") == (400, {"name": "the name is taken"})
    assert answer(Raising, "get") == (409, {"detail": "the name is taken", "code": "taken"})


def test_a_plain_error_is_never_a_refusal():
    with pytest.raises(ValueError, match="bad"):  # a bug stays a 500, not a 400, whatever the view declares
        answer(Raising, error=ValueError("bad"))
    with pytest.raises(ValueError, match="bad"):
        answer(Raising, error=ValueError("bad"), refusals=Refusals(code="invalid", listed=True))
    with pytest.raises(TypeError):  # no view can declare one (issue 38: refusals are DomainErrors with a code)
        Refusals(plain=ValueError)
