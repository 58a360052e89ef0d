"""Looking projects up the way commands and APIs name them."""
from __future__ import annotations

from annotation.errors import DomainError
from annotation.models import Project


class ProjectNotFound(DomainError, ValueError):
    """No project of that id or name (among those the caller may name)."""

    code = "project_not_found"


def find_project(value, what: str = "project", visible=None) -> Project:
    """A project by id or exact name (within ``visible`` when given).

    Raises:
        ProjectNotFound: no such project.
    """
    qs = visible if visible is not None else Project.objects.all()
    project = None
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        project = qs.filter(pk=int(value)).first()
    if project is None and isinstance(value, str):
        project = qs.filter(name=value).first()
    if project is None:
        raise ProjectNotFound(f"{what} {value!r} not found")
    return project


class ProjectError(DomainError, ValueError):
    """A project not created (the message says why and is shown on the home page)."""


def create_project(user, *, name: str, language: str, label_scheme: str, encoder: str = "",
                   guidelines: str = "", description: str = "") -> Project:
    """Create a project with its creator as its first researcher.

    ``label_scheme`` is a scheme slug; ``encoder`` the bundled encoder's name or a path under
    ``MODEL_ROOTS`` (blank: the default; :mod:`annotation.services.projects.model_paths`);
    ``guidelines`` Markdown (blank: the scheme's default guidelines).

    Raises:
        ProjectError: a blank or taken name, an unsupported language, an unknown scheme, an encoder
            that is not an allowed model, or guidelines too long. Nothing is created then.
    """
    from django.db import transaction

    from annotation.models import LabelScheme
    from annotation.services.projects import guidelines as guidelines_service
    from annotation.services.projects import language_tools
    from workers.engine import SUPPORTED_LANGUAGES

    name = name.strip()
    if not name:
        raise ProjectError("Enter a name for the project.")
    if len(name) > Project._meta.get_field("name").max_length:
        raise ProjectError("The name is too long (at most 200 characters).")
    if Project.objects.filter(name__iexact=name).exists():
        raise ProjectError(f"A project named {name!r} exists already; choose another name.")
    if language not in SUPPORTED_LANGUAGES:
        raise ProjectError(f"Unsupported language {language!r}; choose one of: {', '.join(SUPPORTED_LANGUAGES)}.")
    scheme = LabelScheme.objects.filter(slug=label_scheme).first()
    if scheme is None:
        raise ProjectError(f"Unknown label scheme {label_scheme!r}.")
    try:
        encoder = language_tools.checked(encoder, language_tools.ENCODER, None)
    except language_tools.LanguageToolsError as exc:
        raise ProjectError(str(exc)) from exc
    text = guidelines.replace("\r\n", "\n").strip()
    if len(text) > guidelines_service.MAX_LENGTH:
        raise ProjectError(f"Guidelines can be at most {guidelines_service.MAX_LENGTH:,} characters long.")
    with transaction.atomic():
        project = Project.objects.create(name=name, description=description.strip(), language=language,
                                         label_scheme=scheme, created_by=user,
                                         config={language_tools.ENCODER: encoder} if encoder else {})
        add_creator(project, user)
        if text:
            project = guidelines_service.update(project, text, audited=False)  # part of the creation
    return project


def add_creator(project: Project, user) -> None:
    """The project's creator becomes its first researcher; the creation is audited (call it in the
    creating transaction — the API's project create uses it too)."""
    from annotation.models import Membership, Role
    from annotation.services import audit

    Membership.objects.create(project=project, user=user, role=Role.RESEARCHER)
    audit.record("project.create", actor=user, project=project, target=project.name)


def command_researcher(username: str | None = None):
    """Who becomes the researcher of a project a management command creates (``import_corpus
    --create``): the active account ``username`` when given, else the only active account in the
    researchers group that is not an admin (a one-researcher install), else None — then nobody is a
    member and only admins see the project until one adds a researcher.

    Raises:
        ProjectError: no active account named ``username`` (code ``unknown_account``).
    """
    from django.contrib.auth import get_user_model

    from annotation.permissions import RESEARCHERS_GROUP

    accounts = get_user_model().objects.filter(is_active=True)
    if username:
        user = accounts.filter(username=username).first()
        if user is None:
            raise ProjectError(f"no active account named {username!r}", code="unknown_account")
        return user
    candidates = list(accounts.filter(groups__name=RESEARCHERS_GROUP, is_staff=False).distinct()[:2])
    return candidates[0] if len(candidates) == 1 else None


def add_researcher(project: Project, user) -> None:
    """``user`` becomes a researcher of ``project`` (a project a command created: its first member)."""
    from annotation.models import Membership, Role

    Membership.objects.get_or_create(project=project, user=user, defaults={"role": Role.RESEARCHER})
