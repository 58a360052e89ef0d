"""Routes of the audit log: a project's page and API, the admins' site-wide page (included from annotation/urls/__init__.py)."""
from django.urls import path

from ..views import api_audit, audit

urlpatterns: list = [
    path("projects/<int:pk>/audit/", audit.project_audit, name="project-audit"),
    path("audit/", audit.site_audit, name="site-audit"),
    path("api/projects/<int:project_pk>/audit/", api_audit.ProjectAuditView.as_view(), name="project-audit-api"),
]
