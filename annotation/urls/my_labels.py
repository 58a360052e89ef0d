"""Route of the "My labels" page (included from annotation/urls/__init__.py); its API is ``/api/labels/``."""
from django.urls import path

from ..views import my_labels

urlpatterns: list = [
    path("projects/<int:pk>/my-labels/", my_labels.my_labels, name="project-my-labels"),
]
