"""The API views' shared helpers (``annotation.views.mixins``): the project in the URL is looked up once a request."""
from __future__ import annotations

import pytest
from django.http import Http404
from rest_framework.test import APIRequestFactory, force_authenticate
from rest_framework.views import APIView

from annotation.views.mixins import ProjectFromUrl


class _ProjectView(ProjectFromUrl, APIView):
    pass


def _view(user, project_pk: int) -> _ProjectView:
    request = APIRequestFactory().get("/")
    force_authenticate(request, user=user)
    view = _ProjectView()
    view.request, view.kwargs = view.initialize_request(request), {"project_pk": project_pk}
    return view


@pytest.mark.django_db
def test_the_permission_checks_lookup_is_the_one_the_handler_reads(users, project, django_assert_num_queries):
    view = _view(users["rita"], project.pk)
    with django_assert_num_queries(1):  # the permission's get_project, a second call, the handler's self.project
        first = view.get_project()
        assert view.get_project() is first and view.project is first
    assert first == project and first.label_scheme  # the scheme came with it (no query above for it)


@pytest.mark.django_db
def test_reading_the_project_before_any_check_looks_it_up_and_hides_a_project_the_user_cannot_see(users, project):
    assert _view(users["rita"], project.pk).project == project
    with pytest.raises(Http404):
        _view(users["olga"], project.pk).project  # noqa: B018 - the read is the lookup
