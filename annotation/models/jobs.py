"""Background work visible in the database: status, progress and errors (errors as data)."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class Status(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class TrackedWork(models.Model):
    """Common fields of anything a worker runs for a user."""

    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED, db_index=True)
    progress = models.FloatField(default=0.0, help_text="percent done, 0–100")
    message = models.CharField(max_length=500, blank=True)
    error = models.TextField(blank=True)
    result = models.JSONField(default=dict, blank=True)
    timings = models.JSONField(default=dict, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    task_id = models.CharField(max_length=100, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Liveness (hardening): the worker stamps a heartbeat while it works; a RUNNING item whose
    # heartbeat is older than the stale limit lost its worker and is resumed or re-queued.
    heartbeat_at = models.DateTimeField(null=True, blank=True, db_index=True)
    worker = models.CharField(max_length=200, blank=True, help_text="host:pid of the worker running it")
    checkpoint = models.JSONField(default=dict, blank=True, help_text="what finished chunks a resumed attempt skips")

    class Meta:
        abstract = True

    @property
    def is_finished(self) -> bool:
        return self.status in (Status.SUCCEEDED, Status.FAILED, Status.CANCELLED)


TRAIN_JOB = "train-aligner"
"""The job kind that retrains the aligner (every job kind: a module of ``annotation/job_kinds/``)."""


class Job(TrackedWork):
    """Non-alignment background work (corpus statistics, exports, training...)."""

    project = models.ForeignKey("annotation.Project", on_delete=models.CASCADE, related_name="jobs")
    kind = models.CharField(max_length=50)
    params = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} ({self.status})"
