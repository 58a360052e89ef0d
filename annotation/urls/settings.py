"""Routes of the project settings page (included from annotation/urls/__init__.py)."""
from django.urls import path

from ..views import settings

base = "projects/<int:pk>/settings/"

urlpatterns: list = [
    path(base, settings.settings_page, name="project-settings"),
    path(base + "general/", settings.save_general, name="project-settings-general"),
    path(base + "qc/", settings.save_qc, name="project-settings-qc"),
    path(base + "language-tools/", settings.save_language_tools, name="project-settings-language-tools"),
    path(base + "guidelines/", settings.save_guidelines, name="project-settings-guidelines"),
    path(base + "members/", settings.add_member, name="project-settings-add-member"),
    path(base + "members/<int:membership_pk>/role/", settings.change_role, name="project-settings-member-role"),
    path(base + "members/<int:membership_pk>/remove/", settings.remove_member, name="project-settings-member-remove"),
    path(base + "members/<int:membership_pk>/reinstate/", settings.reinstate_member,
         name="project-settings-member-reinstate"),
]
