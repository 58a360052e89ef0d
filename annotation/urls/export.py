"""Routes of the export area (included from annotation/urls/__init__.py): the export page and its API."""
from django.urls import include, path

from ..views import api_export, export

api = "api/projects/<int:project_pk>/"

urlpatterns: list = [
    path("projects/<int:pk>/export/", export.export_page, name="project-export"),
    path(api + "splits/", include([
        path("", api_export.SplitsView.as_view(), name="export-splits"),
        path("unlock/", api_export.UnlockSplitsView.as_view(), name="export-splits-unlock"),
        path("<int:article_pk>/", api_export.ArticleSplitView.as_view(), name="export-article-split"),
    ])),
    path(api + "exports/", include([
        path("", api_export.ExportListView.as_view(), name="export-list"),
        path("preview/", api_export.PreviewView.as_view(), name="export-preview"),
        path("<int:pk>/", include([  # one export: its state, and its file once it succeeded
            path("", api_export.ExportDetailView.as_view(), name="export-detail"),
            path("download/", api_export.DownloadView.as_view(), name="export-download"),
        ])),
    ])),
    path(api + "gold/rows/", api_export.GoldRowsView.as_view(), name="export-gold-rows"),
]
