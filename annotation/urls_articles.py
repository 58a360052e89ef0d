"""Routes of one area of the app (included from annotation/urls.py)."""
from django.urls import path  # noqa: F401

urlpatterns: list = []
