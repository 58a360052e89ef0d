"""Routes of training (included from annotation/urls/__init__.py): training, model versions, what changed."""
from django.urls import path

from ..views import api_training, training_page

api = "api/projects/<int:project_pk>/"

urlpatterns: list = [
    path("projects/<int:pk>/models/", training_page.models_page, name="project-models"),
    path("projects/<int:pk>/runs/compare/", training_page.compare_page, name="project-run-compare"),
    path(api + "train/", api_training.TrainView.as_view(), name="project-train"),
    path(api + "review-changes/", api_training.ReviewChangesView.as_view(), name="project-review-changes"),
    path(api + "model-versions/", api_training.VersionListView.as_view(), name="project-model-versions"),
    path("api/model-versions/<int:pk>/promote/", api_training.PromoteView.as_view(), name="model-version-promote"),
    path("api/model-versions/<int:pk>/realign/", api_training.RealignView.as_view(), name="model-version-realign"),
    path("api/model-versions/<int:pk>/download/", api_training.DownloadView.as_view(), name="model-version-download"),
]
