"""The project settings page (researchers and admins): general settings, language tools, crowd QC and
members.

Plain POST forms, one small view each; the logic lives in ``services.project_settings``. Member
changes redirect back with a message; refused general or QC settings re-render the page (400) with
the submitted values and the errors next to the form.
"""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from workers.engine import SUPPORTED_LANGUAGES

from ..models import LabelScheme, Project, Role
from ..permissions import can_research
from ..services.projects import guidelines, language_tools
from ..services.review import qc
from ..services.settings import project_settings as service
from .common import researchers_only

#: Why the settings pages refuse a project's annotators (people outside it get 404).
SETTERS_ONLY = "only the project's researchers change its settings"


def _render(request: HttpRequest, project: Project, *, general: dict | None = None, general_error: str = "",
            qc_values: dict | None = None, qc_errors: dict | None = None, tools: dict | None = None,
            tools_error: str = "", guidelines_text: str | None = None, guidelines_error: str = "",
            status: int = 200) -> HttpResponse:
    current_qc = qc_values if qc_values is not None else {
        name: f"{value:g}" for name, value in qc.qc_config(project).as_dict().items()}
    context = {
        "project": project,
        "general": general or {
            "description": project.description, "language": project.language,
            "show_predictions": service.shows_predictions(project), "adjudicate": service.adjudication_mode(project),
            "label_scheme": project.label_scheme.slug,
            "paragraph_corrections": service.paragraph_corrections(project),
        },
        "general_error": general_error,
        "language_tools": language_tools.describe(project),
        "tools": tools or {"encoder": (project.config or {}).get(language_tools.ENCODER, ""),
                           "spacy_pipeline": (project.config or {}).get(language_tools.PIPELINE, "")},
        "tools_error": tools_error,
        "languages": SUPPORTED_LANGUAGES,
        "adjudication_modes": service.ADJUDICATION_MODES,
        "correction_modes": service.CORRECTION_MODES,
        "has_labels": service.has_labels(project),
        "schemes": LabelScheme.objects.order_by("name"),
        "qc_fields": [(o.name, current_qc.get(o.name, ""), o.default, (qc_errors or {}).get(o.name, ""), o.help)
                      for o in qc.QC_OPTIONS],
        "qc_error": (qc_errors or {}).get("__all__", ""),
        "members": service.member_rows(project),
        "roles": Role.choices,
        "guidelines": guidelines_text if guidelines_text is not None else guidelines.project_guidelines(project),
        "guidelines_default": not guidelines.custom_guidelines(project),
        "guidelines_html": guidelines.render(guidelines.project_guidelines(project)),
        "guidelines_error": guidelines_error,
    }
    return render(request, "projects/settings.html", context, status=status)


@login_required
@researchers_only(SETTERS_ONLY)
def settings_page(request: HttpRequest, project: Project) -> HttpResponse:
    return _render(request, project)


@login_required
@require_POST
@researchers_only(SETTERS_ONLY)
def save_general(request: HttpRequest, project: Project) -> HttpResponse:
    general = {
        "description": request.POST.get("description", ""), "language": request.POST.get("language", ""),
        "show_predictions": request.POST.get("show_predictions") == "on",
        "adjudicate": request.POST.get("adjudicate", ""),
        "label_scheme": request.POST.get("label_scheme") or project.label_scheme.slug,
        "paragraph_corrections": request.POST.get("paragraph_corrections"),  # absent: kept as is
    }
    try:
        service.update_general(project, **general, by=request.user)
    except service.SettingsError as exc:
        shown = {**general, "paragraph_corrections": general["paragraph_corrections"] or service.paragraph_corrections(project)}
        return _render(request, project, general=shown, general_error=str(exc), status=400)
    messages.success(request, "General settings saved.")
    return redirect("project-settings", pk=project.pk)


@login_required
@require_POST
@researchers_only(SETTERS_ONLY)
def save_language_tools(request: HttpRequest, project: Project) -> HttpResponse:
    tools = {"encoder": request.POST.get("encoder", ""), "spacy_pipeline": request.POST.get("spacy_pipeline", "")}
    try:
        service.update_language_tools(project, **tools, by=request.user)
    except service.SettingsError as exc:
        return _render(request, project, tools=tools, tools_error=str(exc), status=400)
    messages.success(request, "Language tools saved.")
    return redirect("project-settings", pk=project.pk)


@login_required
@require_POST
@researchers_only(SETTERS_ONLY)
def save_qc(request: HttpRequest, project: Project) -> HttpResponse:
    try:
        service.update_qc(project, service.parse_qc_form(request.POST), by=request.user)
    except qc.QcConfigError as exc:
        submitted = {name: request.POST.get(name, "") for name in service.QC_FIELDS}
        errors = {name if name in service.QC_FIELDS else "__all__": why for name, why in exc.problems.items()}
        return _render(request, project, qc_values=submitted, qc_errors=errors or {"__all__": str(exc)}, status=400)
    messages.success(request, "Quality-control settings saved.")
    return redirect("project-settings", pk=project.pk)


@login_required
@require_POST
@researchers_only(SETTERS_ONLY)
def save_guidelines(request: HttpRequest, project: Project) -> HttpResponse:
    text = request.POST.get("guidelines", "")
    try:
        project = guidelines.update(project, text, by=request.user)
    except guidelines.GuidelinesError as exc:
        return _render(request, project, guidelines_text=text, guidelines_error=str(exc), status=400)
    messages.success(request, "Guidelines saved: annotators see them on their next visit to the labelling page."
                     if guidelines.custom_guidelines(project) else "Guidelines reset to the label scheme's defaults.")
    return redirect("project-settings", pk=project.pk)


def _member_action(request: HttpRequest, project: Project, act, success: str, *args) -> HttpResponse:
    try:
        membership = act(project, *args, by=request.user)
    except service.SettingsError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, success.format(user=membership.user.username, role=membership.role))
    if not can_research(request.user, project):  # they just demoted or removed themselves
        return redirect("project-detail", pk=project.pk) if project.memberships.filter(user=request.user).exists() \
            else redirect("home")
    return redirect("project-settings", pk=project.pk)


@login_required
@require_POST
@researchers_only(SETTERS_ONLY)
def add_member(request: HttpRequest, project: Project) -> HttpResponse:
    return _member_action(request, project, service.add_member, "{user} added as {role}.",
                          request.POST.get("username", ""), request.POST.get("role", ""))


@login_required
@require_POST
@researchers_only(SETTERS_ONLY)
def change_role(request: HttpRequest, project: Project, membership_pk: int) -> HttpResponse:
    return _member_action(request, project, service.change_role, "{user} is now {role}.",
                          membership_pk, request.POST.get("role", ""))


@login_required
@require_POST
@researchers_only(SETTERS_ONLY)
def remove_member(request: HttpRequest, project: Project, membership_pk: int) -> HttpResponse:
    return _member_action(request, project, service.remove_member, "{user} removed from the project.", membership_pk)


@login_required
@require_POST
@researchers_only(SETTERS_ONLY)
def reinstate_member(request: HttpRequest, project: Project, membership_pk: int) -> HttpResponse:
    return _member_action(request, project, service.reinstate_member,
                          "{user} reinstated: they get items again and their labels count.", membership_pk)
