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

from ..errors import DomainError
from ..models import LabelScheme, Project, Role
from ..permissions import can_research
from ..services.projects import guidelines, language_tools
from ..services.review import qc
from ..services.settings import project_settings as service
from .common import researchers_only
from .forms import back_with_message, refuses_with

#: Why the settings pages refuse a project's annotators (people outside it get 404).
SETTERS_ONLY = "only the project's researchers change its settings"


def _general_input(request: HttpRequest, project: Project) -> dict:
    return {
        "description": request.POST.get("description", ""), "language": request.POST.get("language", ""),
        "show_predictions": request.POST.get("show_predictions") == "on",
        "adjudicate": request.POST.get("adjudicate", ""),
        "label_scheme": request.POST.get("label_scheme") or project.label_scheme.slug,
        "paragraph_corrections": request.POST.get("paragraph_corrections"),  # absent: kept as is
    }


def _tools_input(request: HttpRequest) -> dict:
    return {"encoder": request.POST.get("encoder", ""), "spacy_pipeline": request.POST.get("spacy_pipeline", "")}


def _render(request: HttpRequest, project: Project, *, refused: str = "", error: DomainError | None = None,
            status: int = 200) -> HttpResponse:
    """The page; ``refused``: the form (``general``, ``tools``, ``qc``, ``guidelines``) the ``error`` refused,
    shown with what was submitted and the error next to it."""
    config = project.config or {}
    general = _general_input(request, project) if refused == "general" else {
        "description": project.description, "language": project.language,
        "show_predictions": service.shows_predictions(project), "adjudicate": service.adjudication_mode(project),
        "label_scheme": project.label_scheme.slug, "paragraph_corrections": None}
    general["paragraph_corrections"] = general["paragraph_corrections"] or service.paragraph_corrections(project)
    current_qc = {name: request.POST.get(name, "") for name in service.QC_FIELDS} if refused == "qc" else {
        name: f"{value:g}" for name, value in qc.qc_config(project).as_dict().items()}
    qc_errors = _qc_errors(error) if refused == "qc" else {}
    message = {refused: str(error)} if error is not None else {}
    context = {
        "project": project,
        "general": general,
        "general_error": message.get("general", ""),
        "language_tools": language_tools.describe(project),
        "tools": _tools_input(request) if refused == "tools" else {
            "encoder": config.get(language_tools.ENCODER, ""),
            "spacy_pipeline": config.get(language_tools.PIPELINE, "")},
        "tools_error": message.get("tools", ""),
        "languages": SUPPORTED_LANGUAGES,
        "adjudication_modes": service.ADJUDICATION_MODES,
        "correction_modes": service.CORRECTION_MODES,
        "has_labels": service.has_labels(project),
        "schemes": LabelScheme.objects.order_by("name"),
        "qc_fields": [(o.name, current_qc.get(o.name, ""), o.default, qc_errors.get(o.name, ""), o.help)
                      for o in qc.QC_OPTIONS],
        "qc_error": qc_errors.get("__all__", ""),
        "members": service.member_rows(project),
        "roles": Role.choices,
        "guidelines": request.POST.get("guidelines", "") if refused == "guidelines"
        else guidelines.project_guidelines(project),
        "guidelines_default": not guidelines.custom_guidelines(project),
        "guidelines_html": guidelines.render(guidelines.project_guidelines(project)),
        "guidelines_error": message.get("guidelines", ""),
    }
    return render(request, "projects/settings.html", context, status=status)


def _qc_errors(error: DomainError | None) -> dict[str, str]:
    """A refused QC form's errors by field (``__all__``: what names no field)."""
    problems = getattr(error, "problems", None) or {}
    errors = {name if name in service.QC_FIELDS else "__all__": why for name, why in problems.items()}
    return errors or {"__all__": str(error)}


def _settings_form(form: str):
    """Declares the POST view of a settings form: researchers only; a refusal shows the page again, ``form``
    with what was submitted and the error (``views.forms``)."""
    refused = refuses_with(lambda request, error, project: _render(request, project, refused=form, error=error,
                                                                    status=error.status))

    def declare(view):
        return login_required(require_POST(researchers_only(SETTERS_ONLY)(refused(view))))
    return declare


@login_required
@researchers_only(SETTERS_ONLY)
def settings_page(request: HttpRequest, project: Project) -> HttpResponse:
    return _render(request, project)


@_settings_form("general")
def save_general(request: HttpRequest, project: Project) -> HttpResponse:
    service.update_general(project, **_general_input(request, project), by=request.user)
    messages.success(request, "General settings saved.")
    return redirect("project-settings", pk=project.pk)


@_settings_form("tools")
def save_language_tools(request: HttpRequest, project: Project) -> HttpResponse:
    service.update_language_tools(project, **_tools_input(request), by=request.user)
    messages.success(request, "Language tools saved.")
    return redirect("project-settings", pk=project.pk)


@_settings_form("qc")
def save_qc(request: HttpRequest, project: Project) -> HttpResponse:
    service.update_qc(project, service.parse_qc_form(request.POST), by=request.user)
    messages.success(request, "Quality-control settings saved.")
    return redirect("project-settings", pk=project.pk)


@_settings_form("guidelines")
def save_guidelines(request: HttpRequest, project: Project) -> HttpResponse:
    project = guidelines.update(project, request.POST.get("guidelines", ""), by=request.user)
    messages.success(request, "Guidelines saved: annotators see them on their next visit to the labelling page."
                     if guidelines.custom_guidelines(project) else "Guidelines reset to the label scheme's defaults.")
    return redirect("project-settings", pk=project.pk)


_back_to_settings = refuses_with(back_with_message("project-settings", pk_of=lambda project, *args: project.pk))


def _member_form(view):
    """Declares the POST view of a member action: researchers only (its refusal: the action's own message)."""
    return login_required(require_POST(researchers_only(SETTERS_ONLY)(view)))


@_back_to_settings
def _member_action(request: HttpRequest, project: Project, act, success: str, *args) -> HttpResponse:
    membership = act(project, *args, by=request.user)
    messages.success(request, success.format(user=membership.user.username, role=membership.role))
    if not can_research(request.user, project):  # they just demoted or removed themselves
        return redirect("project-detail", pk=project.pk) if project.memberships.filter(user=request.user).exists() \
            else redirect("home")
    return redirect("project-settings", pk=project.pk)


@_member_form
def add_member(request: HttpRequest, project: Project) -> HttpResponse:
    return _member_action(request, project, service.add_member, "{user} added as {role}.",
                          request.POST.get("username", ""), request.POST.get("role", ""))


@_member_form
def change_role(request: HttpRequest, project: Project, membership_pk: int) -> HttpResponse:
    return _member_action(request, project, service.change_role, "{user} is now {role}.",
                          membership_pk, request.POST.get("role", ""))


@_member_form
def remove_member(request: HttpRequest, project: Project, membership_pk: int) -> HttpResponse:
    return _member_action(request, project, service.remove_member, "{user} removed from the project.", membership_pk)


@_member_form
def reinstate_member(request: HttpRequest, project: Project, membership_pk: int) -> HttpResponse:
    return _member_action(request, project, service.reinstate_member,
                          "{user} reinstated: they get items again and their labels count.", membership_pk)
