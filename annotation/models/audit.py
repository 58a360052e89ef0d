"""The audit log: who did what, when (imports, runs, trainings, split changes, exports, members, roles)."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class AuditEvent(models.Model):
    """One recorded action. ``project`` is empty for site-wide actions (accounts, tokens)."""

    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    project = models.ForeignKey("annotation.Project", null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="audit_events")
    action = models.CharField(max_length=64, db_index=True, help_text="e.g. import, run.start, member.add")
    target = models.CharField(max_length=300, blank=True, help_text="what it acted on, in words (run #12, user ana)")
    details = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.action} {self.target}"
