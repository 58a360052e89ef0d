"""Exports of gold and automatically aligned corpora, and the log of split changes."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from .corpus import Article
from .jobs import Job
from .projects import Project


class SplitChange(models.Model):
    """One researcher's change of an article's split. ``override`` marks a change of a split that was
    locked (because it was exported); such a change needs a reason."""

    article = models.ForeignKey(Article, on_delete=models.CASCADE, related_name="split_changes")
    old_name = models.CharField(max_length=10, blank=True, help_text="empty when the article had no split")
    new_name = models.CharField(max_length=10, blank=True, help_text="empty when the split was removed")
    override = models.BooleanField(default=False, help_text="the split was locked and the change overrode the lock")
    reason = models.TextField(blank=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.article} {self.old_name or '-'} → {self.new_name or '-'}{' (override)' if self.override else ''}"


class Export(models.Model):
    """One export: its options, where its files are (``MEDIA_ROOT/exports/<id>/``) and its manifest.
    Status and progress live on the :class:`~annotation.models.Job` that wrote it (none for CLI runs)."""

    GOLD = "gold"
    AUTO = "auto"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="exports")
    kind = models.CharField(max_length=10, choices=[(GOLD, "gold labels"), (AUTO, "automatic alignment")])
    options = models.JSONField(default=dict, blank=True)
    job = models.OneToOneField(Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="export")
    manifest = models.JSONField(default=dict, blank=True)
    archive = models.CharField(max_length=500, blank=True, help_text="zip path relative to MEDIA_ROOT")
    pair_count = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind} export #{self.pk} of {self.project}"


class PreviewPart(models.Model):
    """One article's share of a gold export preview (``services/export/preview_parts.py``, issue 37):
    the preview is their sum. One row per article and set of ``options`` (their digest): ``key``, the
    options and project-wide marks it was computed under, and ``mark``, the article's own evidence marks
    then — a part whose key or mark is no longer current is computed again and replaces the row."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    article = models.ForeignKey(Article, on_delete=models.CASCADE, related_name="+")
    options = models.CharField(max_length=64)
    key = models.CharField(max_length=64)
    mark = models.CharField(max_length=64)
    part = models.JSONField(default=dict)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["article", "options"], name="one_preview_part_per_options")]
        indexes = [models.Index(fields=["project", "options"], name="preview_part_options_idx")]


class PreviewAnswer(models.Model):
    """A gold export preview as last answered for one set of ``options`` (their digest), with the digest of
    the data ``state`` it was computed under (``export.preview``): the same state after a restart answers
    from here, without reading the per-article marks (issue 37)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    options = models.CharField(max_length=64)
    state = models.CharField(max_length=64)
    answer = models.JSONField(default=dict)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "options"], name="one_preview_answer_per_options")]
