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

from annotation.models import AuditEvent, Project

ACTIONS: dict[str, str] = {
    "import": "imported a corpus",
    "run.start": "started an alignment run",
    "run.retry": "retried a run",
    "run.cancel": "cancelled a run",
    "run.delete": "deleted a run",
    "job.cancel": "cancelled a background job",
    "training.start": "started a training",
    "training.cancel": "cancelled a training",
    "model.promote": "made a model version the default",
    "split.change": "changed article splits",
    "export": "exported data",
    "member.add": "added a member",
    "member.remove": "removed a member",
    "member.role": "changed a member's role",
    "member.reinstate": "reinstated an excluded annotator",
    "project.create": "created a project",
    "project.settings": "changed project settings",
    "user.create": "created a user",
    "user.invite": "invited a user",
    "user.deactivate": "deactivated a user",
    "user.activate": "reactivated a user",
    "token.rotate": "rotated an API token",
    "token.revoke": "revoked an API token",
}


def record(action: str, *, actor: Any = None, project: Project | None = None, target: str = "",
           **details: Any) -> AuditEvent:
    """Store one event. ``action`` must be a key of :data:`ACTIONS`; ``details`` must be JSON-able.

    Without a signed-in ``actor`` nobody used the app to do it — a management command or a script
    called the service — and ``details["via"]`` says ``"command"`` unless the caller says otherwise.

    Raises:
        ValueError: an unknown action (a typo would otherwise hide events from the page's filter).
    """
    if action not in ACTIONS:
        raise ValueError(f"unknown audit action {action!r}; valid: {', '.join(sorted(ACTIONS))}")
    user = actor if getattr(actor, "is_authenticated", False) else None
    if user is None:
        details.setdefault("via", "command")
    return AuditEvent.objects.create(action=action, actor=user, project=project, target=str(target)[:300],
                                     details=details)


def record_cancel(model: type, pk: int, actor: Any = None) -> AuditEvent:
    """A cancelled run (``run.cancel``), training (``training.cancel``) or other job (``job.cancel``)."""
    from annotation.models import AlignmentRun

    row = model.objects.select_related("project").get(pk=pk)
    if model is AlignmentRun:
        return record("run.cancel", actor=actor, project=row.project, target=f"run #{pk}")
    from annotation.services.training.dataset import TRAIN_JOB

    action = "training.cancel" if row.kind == TRAIN_JOB else "job.cancel"
    return record(action, actor=actor, project=row.project, target=f"job #{pk}", kind=row.kind)
