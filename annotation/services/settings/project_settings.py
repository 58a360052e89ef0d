"""What a project's researchers change on its settings page: general settings, language tools, crowd
QC, members.

Every write checks its input here and raises :class:`SettingsError` (or ``qc.QcConfigError``
with one message per field) before saving anything, so the page shows the problem and the project
stays as it was. QC values are parsed by :meth:`annotation.services.review.qc.QcConfig.parse` from the
declarations where their types, defaults and ranges live (``qc.QC_OPTIONS``); the adjudication modes come from
:mod:`annotation.services.review.adjudication`,
the paragraph-correction modes from :mod:`annotation.services.editing.paragraph_correction`.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from annotation.errors import DomainError
from annotation.models import Adjudication, Assignment, Label, LabelScheme, Membership, Project, Role
from annotation.services import audit
from annotation.services.editing.paragraph_correction import CORRECTION_MODES, PROPOSALS
from annotation.services.review import qc
from annotation.services.review.adjudication import MODES as ADJUDICATION_MODES
from annotation.services.review.queue_serving import queue_pairs
from annotation.services.settings import config_schema
from workers.engine import SUPPORTED_LANGUAGES

QC_FIELDS: tuple[str, ...] = tuple(o.name for o in qc.QC_OPTIONS)


class SettingsError(DomainError, ValueError):
    """A change refused (the message says why and is shown to the researcher)."""


class ConfigSettingsError(SettingsError):
    """Config values refused by :mod:`config_schema`; ``errors`` maps each bad key to why."""

    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        super().__init__("; ".join(f"{key}: {why}" for key, why in errors.items()))

    def payload(self) -> dict:
        return dict(self.errors)

    def field_message(self) -> dict[str, str]:
        return dict(self.errors)


# --- General ----------------------------------------------------------------------------------

def has_labels(project: Project) -> bool:
    """Whether any label or gold label exists in the project (then its label scheme is fixed)."""
    return (Label.objects.filter(pair__article__project=project).exists()
            or Adjudication.objects.filter(pair__article__project=project).exists())


def adjudication_mode(project: Project) -> str:
    return (project.config or {}).get("adjudicate", "disagreements")


def shows_predictions(project: Project) -> bool:
    return bool((project.config or {}).get("show_predictions", False))


def paragraph_corrections(project: Project) -> str:
    """``"proposals"`` (annotators' paragraph corrections wait for a researcher) or ``"direct"``."""
    return (project.config or {}).get("paragraph_corrections", PROPOSALS)


def update_general(project: Project, *, description: str, language: str, show_predictions: bool,
                   adjudicate: str, label_scheme: str | None = None,
                   paragraph_corrections: str | None = None, by=None) -> Project:
    """Save description, language, blind annotation (``show_predictions``), the adjudication mode and
    (unless None: kept as is) whether annotators' paragraph corrections are ``"proposals"`` for a
    researcher or apply ``"direct"``ly; ``label_scheme`` (a slug) only while the project has no labels.

    Raises:
        SettingsError: an unsupported language or mode, an unknown scheme, or a scheme change
            once labels exist. Nothing is saved then.
    """
    if language not in SUPPORTED_LANGUAGES:
        raise SettingsError(f"Unsupported language {language!r}; choose one of: {', '.join(SUPPORTED_LANGUAGES)}.")
    if adjudicate not in ADJUDICATION_MODES:
        raise SettingsError(f"Adjudication mode must be one of: {', '.join(ADJUDICATION_MODES)} (got {adjudicate!r}).")
    if paragraph_corrections is not None and paragraph_corrections not in CORRECTION_MODES:
        raise SettingsError(f"Annotators' paragraph corrections must be one of: {', '.join(CORRECTION_MODES)} "
                            f"(got {paragraph_corrections!r}).")
    with transaction.atomic():
        project = Project.objects.select_for_update().select_related("label_scheme").get(pk=project.pk)
        scheme = project.label_scheme
        if label_scheme and label_scheme != scheme.slug:
            scheme = LabelScheme.objects.filter(slug=label_scheme).first()
            if scheme is None:
                raise SettingsError(f"Unknown label scheme {label_scheme!r}.")
            check_scheme_change(project, scheme)
        before = _general(project)
        project.description = description.strip()
        project.language = language
        project.label_scheme = scheme
        changes = {"show_predictions": bool(show_predictions), "adjudicate": adjudicate}
        if paragraph_corrections is not None:
            changes["paragraph_corrections"] = paragraph_corrections
        project.config = checked_config({**(project.config or {}), **changes}, keys=list(changes))
        project.save(update_fields=["description", "language", "label_scheme", "config"])
        changed = sorted(k for k, v in _general(project).items() if before[k] != v)
        if changed:
            audit.record("project.settings", actor=by, project=project, target=project.name, changed=changed)
    return project


def check_scheme_change(project: Project, scheme: LabelScheme) -> None:
    """Refuse another label scheme once the project has labels (they were given with the current one)."""
    if scheme.pk != project.label_scheme_id and has_labels(project):
        raise SettingsError("The label scheme cannot change: the project already has labels "
                            "given with the current scheme.")


def checked_config(config: dict, *, keys: list[str] | None = None, project: Project | None = None) -> dict:
    """``config`` once :mod:`config_schema` accepts it (only ``keys`` when given); ConfigSettingsError otherwise."""
    try:
        return config_schema.checked(config, keys=keys, project=project)
    except config_schema.ConfigError as exc:
        raise ConfigSettingsError(exc.errors) from exc


def set_queue_changes(project: Project, changes: dict | None, *, by=None) -> dict | None:
    """Narrow the annotation queue — every annotator's: the re-aligned pairs are the team's to review
    — to the pairs whose prediction differs between two runs of the project (``{"old": <run id>,
    "new": <run id>}``), or back to the whole queue (None). Returns what is stored; recorded in the
    audit log (``queue.review_changes`` / ``queue.whole``) and shown on every queue page
    (:func:`annotation.services.review.queue_progress.changes_review`).

    Raises:
        ConfigSettingsError: not two different runs of this project; nothing is saved then.
    """
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=project.pk)
        config = {k: v for k, v in (project.config or {}).items() if k != "queue_changes"}
        if changes is not None:
            config["queue_changes"] = changes
            checked_config(config, keys=["queue_changes"], project=project)
        if config != (project.config or {}):
            project.config = config
            project.save(update_fields=["config"])
            _record_queue_changes(project, changes, by)
    return changes


def _record_queue_changes(project: Project, changes: dict | None, by) -> None:
    """The audit event of a review of changes started (with how many pairs every annotator's queue
    now holds) or ended: it changes the queue of the whole team, so the log says so by name."""
    if changes is None:
        audit.record("queue.whole", actor=by, project=project, target=project.name)
        return
    audit.record("queue.review_changes", actor=by, project=project, target=f"run #{changes['old']} → #{changes['new']}",
                 old=changes["old"], new=changes["new"], pairs=queue_pairs(project).count())


API_FIELDS = ("name", "description", "language", "label_scheme", "config")


def merge_patch(target, patch):
    """``target`` with the JSON merge patch ``patch`` applied (RFC 7396): objects merge recursively,
    ``None`` (JSON ``null``) removes a key, anything else replaces. ``target`` is not modified."""
    if not isinstance(patch, dict):
        return patch
    merged = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged


_ABSENT = object()


def config_changes(old, new, prefix: str = "") -> dict[str, dict]:
    """``{"dotted.key": {"old": …, "new": …}}`` for every leaf that differs between two configs
    (an absent key is ``None``; objects are compared key by key)."""
    if isinstance(old, dict) and isinstance(new, dict):
        found = {}
        for key in sorted(set(old) | set(new), key=str):
            found.update(config_changes(old.get(key, _ABSENT), new.get(key, _ABSENT), f"{prefix}{key}."))
        return found
    if old == new:
        return {}
    return {prefix.rstrip("."): {"old": None if old is _ABSENT else old, "new": None if new is _ABSENT else new}}


def update_project(project: Project, changes: dict, *, by=None, merge_config: bool = False) -> Project:
    """Apply a change from the API (``PATCH``/``PUT /api/projects/<id>/``: ``name``, ``description``,
    ``language``, ``label_scheme`` (a :class:`LabelScheme`), ``config``) by the
    settings page's rules: no scheme change once labels exist, a ``config`` that
    :mod:`config_schema` accepts and that names only this project's runs and model versions.

    ``config`` replaces the whole config, or with ``merge_config`` (``PATCH``) is a JSON merge patch
    (RFC 7396, :func:`merge_patch`) whose result is checked like a whole config. The audit event
    names the changed fields and, for the config, each changed key path with its old and new value.

    Raises:
        SettingsError: (:class:`ConfigSettingsError` for config) nothing is saved then.
    """
    unknown = sorted(set(changes) - set(API_FIELDS))
    if unknown:
        raise SettingsError(f"These cannot be changed here: {', '.join(unknown)}.")
    if "language" in changes and changes["language"] not in SUPPORTED_LANGUAGES:
        raise SettingsError(f"Unsupported language {changes['language']!r}; "
                            f"choose one of: {', '.join(SUPPORTED_LANGUAGES)}.")
    with transaction.atomic():
        project = Project.objects.select_for_update().select_related("label_scheme").get(pk=project.pk)
        if "label_scheme" in changes:
            check_scheme_change(project, changes["label_scheme"])
        if "config" in changes:
            config = merge_patch(project.config or {}, changes["config"]) if merge_config else changes["config"]
            changes = {**changes, "config": checked_config(config, project=project)}
        changed = sorted(name for name, value in changes.items() if getattr(project, name) != value)
        details = {}
        if "config" in changed:
            details["config"] = config_changes(project.config or {}, changes["config"])
        for name, value in changes.items():
            setattr(project, name, value)
        if changes:
            project.save(update_fields=list(changes))
        if changed:
            audit.record("project.settings", actor=by, project=project, target=project.name, changed=changed,
                         **details)
    return project


def _general(project: Project) -> dict:
    config = project.config or {}
    return {"description": project.description, "language": project.language, "label_scheme": project.label_scheme.slug,
            **{k: config.get(k) for k in ("show_predictions", "adjudicate", "paragraph_corrections")}}


def update_language_tools(project: Project, *, encoder: str, spacy_pipeline: str, by=None) -> Project:
    """Save the project's sentence encoder and spaCy pipeline (each a name or a path; blank: the
    default), which its runs and scoring jobs use (:mod:`annotation.services.projects.language_tools`).

    Raises:
        SettingsError: a value that cannot be a name or path. Nothing is saved then.
    """
    from annotation.services.projects import language_tools

    try:
        with transaction.atomic():
            project = language_tools.update(project, encoder=encoder, spacy_pipeline=spacy_pipeline)
            audit.record("project.settings", actor=by, project=project, target=project.name, changed=["language tools"],
                         encoder=encoder.strip(), spacy_pipeline=spacy_pipeline.strip())
            return project
    except language_tools.LanguageToolsError as exc:
        raise SettingsError(str(exc)) from exc


# --- Crowd quality control --------------------------------------------------------------------

def parse_qc_form(data) -> qc.QcConfig:
    """The QC form's fields, parsed once (a blank field means its default).

    Raises:
        qc.QcConfigError: every bad field at once (``problems``: field → why); nothing is saved.
    """
    return qc.QcConfig.parse({name: str(data[name]) for name in QC_FIELDS if str(data.get(name, "")).strip() != ""},
                             text=True)


def update_qc(project: Project, config: qc.QcConfig, *, by=None) -> qc.QcConfig:
    """Save parsed QC settings as ``config["qc"]``."""
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=project.pk)
        project.config = checked_config({**(project.config or {}), "qc": config.as_dict()}, keys=["qc"])
        project.save(update_fields=["config"])
        audit.record("project.settings", actor=by, project=project, target=project.name, changed=["qc"],
                     qc=config.as_dict())
    return config


# --- Members ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class MemberRow:
    membership: Membership
    answers: int | None = None          # test questions answered (annotators only)
    accuracy: float | None = None       # share of them matching gold
    excluded_at: datetime | None = None
    exclusion_reason: str = ""

    @property
    def is_annotator(self) -> bool:
        return self.membership.role == Role.ANNOTATOR


def member_rows(project: Project) -> list[MemberRow]:
    """Every member with role and, for annotators, test accuracy and exclusion (researchers first)."""
    scores = qc.test_accuracy(project)
    rows = []
    memberships = project.memberships.select_related("user")
    for m in sorted(memberships, key=lambda m: (m.role != Role.RESEARCHER, m.user.username.lower())):
        score = scores.get(m.user_id)
        annotator = m.role == Role.ANNOTATOR
        rows.append(MemberRow(m, answers=(score.answers if score else 0) if annotator else None,
                              accuracy=score.accuracy if score else None, excluded_at=m.excluded_at,
                              exclusion_reason=qc.exclusion_message(m.excluded_at, m.exclusion_reason) or ""))
    return rows


def _role(role: str) -> str:
    if role not in Role.values:
        raise SettingsError(f"Role must be one of: {', '.join(Role.values)} (got {role!r}).")
    return role


def _membership(project: Project, membership_id: int) -> Membership:
    membership = Membership.objects.select_related("user").filter(project=project, pk=membership_id).first()
    if membership is None:
        raise SettingsError("That person is not a member of this project (any more).")
    return membership


def _guard_last_researcher(project: Project, membership: Membership, action: str) -> None:
    if membership.role != Role.RESEARCHER:
        return
    researchers = list(Membership.objects.select_for_update().filter(project=project, role=Role.RESEARCHER)
                       .values_list("pk", flat=True))
    if researchers == [membership.pk]:
        raise SettingsError(f"Cannot {action} {membership.user.username}: they are the project's last researcher. "
                            f"Make someone else a researcher first.")


def add_member(project: Project, username: str, role: str, *, by=None) -> Membership:
    """Add an existing user to the project with ``role``."""
    role = _role(role)
    username = username.strip()
    user = get_user_model().objects.filter(username=username).first() if username else None
    if user is None:
        raise SettingsError(f"No user named {username!r}." if username else "Enter a username.")
    if not user.is_active:
        raise SettingsError(f"{user.username}'s account is deactivated; an admin can reactivate it on the People page.")
    already = SettingsError(f"{user.username} is already a member of this project.")
    if Membership.objects.filter(project=project, user=user).exists():
        raise already
    try:
        with transaction.atomic():  # a concurrent request may add them between the check and here
            membership = Membership.objects.create(project=project, user=user, role=role)
            audit.record("member.add", actor=by, project=project, target=user.username, role=role)
    except IntegrityError:
        raise already from None
    return membership


@transaction.atomic
def change_role(project: Project, membership_id: int, role: str, *, by=None) -> Membership:
    """Give a member another role; the last researcher cannot be demoted."""
    role = _role(role)
    membership = _membership(project, membership_id)
    if role != membership.role:
        if role != Role.RESEARCHER:
            _guard_last_researcher(project, membership, "demote")
        audit.record("member.role", actor=by, project=project, target=membership.user.username, old=membership.role,
                     new=role)
        membership.role = role
        membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def remove_member(project: Project, membership_id: int, *, by=None) -> Membership:
    """Take a member off the project (their labels stay; their open items go back to the queue);
    the last researcher cannot be removed."""
    membership = _membership(project, membership_id)
    _guard_last_researcher(project, membership, "remove")
    Assignment.objects.filter(annotator=membership.user, pair__article__project=project,
                              status=Assignment.OPEN).delete()
    membership.delete()
    audit.record("member.remove", actor=by, project=project, target=membership.user.username, role=membership.role)
    return membership


def reinstate_member(project: Project, membership_id: int, *, by=None) -> Membership:
    """Undo a QC exclusion (:func:`qc.reinstate`): the annotator gets items again and their labels count."""
    membership = _membership(project, membership_id)
    if membership.excluded_at is None:
        raise SettingsError(f"{membership.user.username} is not excluded.")
    with transaction.atomic():
        qc.reinstate(membership.user, project)
        audit.record("member.reinstate", actor=by, project=project, target=membership.user.username)
    membership.refresh_from_db()
    return membership
