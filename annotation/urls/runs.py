"""Routes of a single run's page and of the method schemas (included from annotation/urls/__init__.py)."""
from django.urls import path

from ..views import api_runs, run_page

urlpatterns: list = [
    path("runs/<int:pk>/", run_page.run_page, name="run-page"),
    path("projects/<int:project_pk>/runs/<int:pk>/", run_page.run_page, name="project-run-page"),
    path("api/methods/", api_runs.MethodsView.as_view(), name="method-list"),
]
