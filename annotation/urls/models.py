"""Routes of the model registry (included from annotation/urls/__init__.py): training, versions, what changed."""
from django.urls import path

from ..views import api_models, models_page

api = "api/projects/<int:project_pk>/"

urlpatterns: list = [
    path("projects/<int:pk>/models/", models_page.models_page, name="project-models"),
    path("projects/<int:pk>/runs/compare/", models_page.compare_page, name="project-run-compare"),
    path(api + "train/", api_models.TrainView.as_view(), name="project-train"),
    path(api + "review-changes/", api_models.ReviewChangesView.as_view(), name="project-review-changes"),
    path(api + "model-versions/", api_models.VersionListView.as_view(), name="project-model-versions"),
    path("api/model-versions/<int:pk>/promote/", api_models.PromoteView.as_view(), name="model-version-promote"),
    path("api/model-versions/<int:pk>/realign/", api_models.RealignView.as_view(), name="model-version-realign"),
    path("api/model-versions/<int:pk>/download/", api_models.DownloadView.as_view(), name="model-version-download"),
]
