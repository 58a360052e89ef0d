"""The audit log (hardening issue): one call records who did what, when, to what.

Services call :func:`record` at the moment an action takes effect (inside the same transaction
when there is one, so a rolled-back import leaves no event). The log is read by researchers of
the project and by admins on the audit page.

    >>> from annotation.services.audit import ACTIONS
    >>> "import" in ACTIONS and "member.add" in ACTIONS
    True
"""
from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from annotation.errors import DomainError
from annotation.models import TRAIN_JOB, AlignmentRun, AuditEvent, Project

ACTIONS: dict[str, str] = {
    "import": "imported a corpus",
    "run.start": "started an alignment run",
    "run.retry": "retried a run",
    "run.cancel": "cancelled a run",
    "run.delete": "deleted a run",
    "job.cancel": "cancelled a background job",
    "job.retry": "retried a background job",
    "worker.lost": "re-queued (or, after too many losses, failed) work whose worker stopped responding",
    "training.start": "started a training",
    "training.cancel": "cancelled a training",
    "model.promote": "made a model version the default",
    "split.change": "changed article splits",
    "export": "exported data",
    "gold.curate": "decided gold links in the curation of two annotators' article alignments",
    "member.add": "added a member",
    "member.remove": "removed a member",
    "member.role": "changed a member's role",
    "member.reinstate": "reinstated an excluded annotator",
    "project.create": "created a project",
    "project.settings": "changed project settings",
    "queue.review_changes": "narrowed every annotator's queue to the pairs two runs disagree on (review of changes)",
    "queue.whole": "set every annotator's queue back to the whole queue",
    "user.create": "created a user",
    "user.invite": "invited a user",
    "user.deactivate": "deactivated a user",
    "user.activate": "reactivated a user",
    "token.rotate": "rotated an API token",
    "token.revoke": "revoked an API token",
    "login.limit": "slowed down sign-ins after repeated failures (per username or per address)",
}


def record(action: str, *, actor: Any = None, project: Project | None = None, target: str = "",
           **details: Any) -> AuditEvent:
    """Store one event. ``action`` must be a key of :data:`ACTIONS`; ``details`` must be JSON-able.

    Without a signed-in ``actor`` nobody used the app to do it — a management command or a script
    called the service — and ``details["via"]`` says ``"command"`` unless the caller says otherwise.

    Raises:
        ValueError: an unknown action (a typo would otherwise hide events from the page's filter).
    """
    if action not in ACTIONS:  # a programming error: the callers name a constant action
        raise ValueError(f"unknown audit action {action!r}; valid: {', '.join(sorted(ACTIONS))}")
    user = actor if getattr(actor, "is_authenticated", False) else None
    if user is None:
        details.setdefault("via", "command")
    return AuditEvent.objects.create(action=action, actor=user, project=project, target=str(target)[:300],
                                     details=details)


def record_cancel(model: type, pk: int, actor: Any = None) -> AuditEvent:
    """A cancelled run (``run.cancel``), training (``training.cancel``) or other job (``job.cancel``)."""
    row = model.objects.select_related("project").get(pk=pk)
    if model is AlignmentRun:
        return record("run.cancel", actor=actor, project=row.project, target=f"run #{pk}")
    action = "training.cancel" if row.kind == TRAIN_JOB else "job.cancel"
    return record(action, actor=actor, project=row.project, target=f"job #{pk}", kind=row.kind)


# --- Reading the log ---------------------------------------------------------------------------

#: The action groups the filter also accepts ("run" = every run.* action).
GROUPS: tuple[str, ...] = tuple(sorted({a.split(".")[0] for a in ACTIONS if "." in a}))
#: Longest details summary shown in a table cell.
SUMMARY_LENGTH = 160


class FilterError(DomainError, ValueError):
    """A filter refused; ``field`` names it (``action`` or ``user``): 400 ``{field: message}``."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(message)

    def payload(self) -> dict:
        return {self.field: str(self)}


def events(*, project: Project | None = None, action: str = "", actor: str = "") -> QuerySet[AuditEvent]:
    """Events newest first: of ``project`` (None: every event, the admins' site-wide log), of one
    ``action`` or action group (``"run"``), by the user named ``actor`` (``"-"``: nobody signed in,
    e.g. a management command).

    Raises:
        FilterError: an action that is neither a key of :data:`ACTIONS` nor a group, or a user
            name no account can have (too long, control characters).
    """
    qs = AuditEvent.objects.select_related("actor", "project").order_by("-created_at", "-id")
    if project is not None:
        qs = qs.filter(project=project)
    action = action.strip()
    if action:
        if action not in ACTIONS and action not in GROUPS:
            raise FilterError("action", f"unknown action {action!r}; choose one of: {', '.join(sorted(ACTIONS))} "
                                        f"or a group: {', '.join(GROUPS)}")
        qs = qs.filter(Q(action=action) | Q(action__startswith=action + ".")) if action in GROUPS else qs.filter(action=action)
    actor = actor.strip()
    if len(actor) > 150 or any(ord(c) < 32 for c in actor):
        raise FilterError("user", "user must be a username (or - for actions of management commands)")
    if actor == "-":
        qs = qs.filter(actor__isnull=True)
    elif actor:
        qs = qs.filter(actor__username=actor)
    return qs


def actors(project: Project | None = None) -> list[str]:
    """Usernames that appear in the log (of ``project``), for the page's user filter."""
    qs = AuditEvent.objects.filter(actor__isnull=False)
    if project is not None:
        qs = qs.filter(project=project)
    return sorted(set(qs.values_list("actor__username", flat=True)), key=str.lower)


def summary(details: dict) -> str:
    """``details`` in one short line for a table cell, in an order that does not depend on the
    database (PostgreSQL's jsonb keeps no key order): ``old`` before ``new``, then by name, ``via`` last.

    >>> summary({"via": "command", "method": "sbert", "formats": ["tsv", "hf"], "qc": {"min_answers": 5}})
    'formats: tsv, hf · method: sbert · qc: min_answers=5 · via: command'
    >>> summary({"new": "researcher", "old": "annotator"})
    'old: annotator · new: researcher'
    """
    def show(value: Any) -> str:
        if isinstance(value, dict):
            return ", ".join(f"{k}={show(v)}" for k, v in sorted(value.items()))
        if isinstance(value, (list, tuple)):
            return ", ".join(show(v) for v in value)
        return "—" if value in (None, "") else str(value)

    first = {"old": 0, "new": 1}
    items = sorted((details or {}).items(), key=lambda kv: (kv[0] == "via", first.get(kv[0], 2), kv[0]))
    text = " · ".join(f"{key}: {show(value)}" for key, value in items)
    return text if len(text) <= SUMMARY_LENGTH else text[:SUMMARY_LENGTH - 1] + "…"
