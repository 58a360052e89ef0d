"""All routes of the app, one module per area; ``alignapp/urls.py`` includes this package."""
from django.urls import include, path

urlpatterns = [
    path("", include("annotation.urls.queue")),  # the labelling queue's API, tried first (its requests are the most frequent)
    path("", include("annotation.urls.review")),  # adjudication, dashboard, agreement
    path("", include("annotation.urls.articles")),  # whole-article and paragraph-correction views
    path("", include("annotation.urls.export")),  # splits, export page, export jobs and downloads
    path("", include("annotation.urls.settings")),
    path("", include("annotation.urls.people")),  # accounts (admins), invitations, user search
    path("", include("annotation.urls.training")),  # model registry: training, versions, run comparison
    path("", include("annotation.urls.runs")),  # one run's page, method option schemas
    path("", include("annotation.urls.my_labels")),  # an annotator's own labels: filter, search, edit
    path("", include("annotation.urls.audit")),  # the audit log: project and site-wide pages, project API
    path("", include("annotation.urls.core")),  # REST router, queue API, login, home, project/article pages
]
