"""Human judgements: labels, work queues, adjudicated gold and article splits."""
from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from .alignment import CandidatePair
from .corpus import Article


class Label(models.Model):
    """One annotator's judgement of one pair. At most one per (pair, annotator); a resubmission
    with the same ``client_token`` is recognised and stored once."""

    pair = models.ForeignKey(CandidatePair, on_delete=models.CASCADE, related_name="labels")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="labels")
    value = models.CharField(max_length=50, blank=True)
    ratings = models.JSONField(default=dict, blank=True, help_text="Likert answers per dimension")
    comment = models.TextField(blank=True)
    seconds = models.FloatField(default=0.0)
    is_test_question = models.BooleanField(default=False)
    client_token = models.UUIDField(default=uuid.uuid4, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["pair", "annotator"], name="one_label_per_annotator")]


class Assignment(models.Model):
    """A pair handed to an annotator; the queue is the set of open assignments.

    ``is_test`` marks a hidden test question (a pair with gold, served by the queue for QC);
    ``assigned_at`` is when the pair was (re)served, so the latest open assignment is the current item.
    """

    OPEN = "open"
    DONE = "done"
    SKIPPED = "skipped"

    pair = models.ForeignKey(CandidatePair, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=10, choices=[(OPEN, "open"), (DONE, "done"), (SKIPPED, "skipped")], default=OPEN)
    is_test = models.BooleanField(default=False, help_text="a hidden test question (the pair has gold)")
    assigned_at = models.DateTimeField(default=timezone.now)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["pair", "annotator"], name="one_assignment_per_annotator")]
        indexes = [models.Index(fields=["annotator", "status", "assigned_at"], name="assignment_queue_idx"),
                   models.Index(fields=["pair", "status"], name="assignment_quota_idx")]


class Adjudication(models.Model):
    """The final gold label of a pair; what exports and training use."""

    ADJUDICATED = "adjudicated"
    MAJORITY = "majority"
    SINGLE = "single"
    IMPORTED = "imported"

    pair = models.OneToOneField(CandidatePair, on_delete=models.CASCADE, related_name="gold")
    value = models.CharField(max_length=50)
    provenance = models.CharField(
        max_length=20,
        choices=[(ADJUDICATED, "adjudicated in-house"), (MAJORITY, "majority of crowd votes"), (SINGLE, "single annotator"), (IMPORTED, "imported gold")],
    )
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)


class Split(models.Model):
    """The article's train/dev/test split (services.export.splits assigns, edits and locks them).

    ``origin`` says how it was set: ``policy`` (seeded assignment) or ``manual`` (a researcher);
    ``locked`` is set when the article is exported; changing a locked split needs an override that
    is logged as a :class:`~annotation.models.SplitChange`."""

    TRAIN = "train"
    DEV = "dev"
    TEST = "test"
    NAMES = (TRAIN, DEV, TEST)
    POLICY = "policy"
    MANUAL = "manual"

    article = models.OneToOneField(Article, on_delete=models.CASCADE, related_name="split")
    name = models.CharField(max_length=10, choices=[(TRAIN, "train"), (DEV, "dev"), (TEST, "test")])
    locked = models.BooleanField(default=False)
    origin = models.CharField(max_length=10, choices=[(POLICY, "split policy"), (MANUAL, "set by a researcher")],
                              default=POLICY)
    locked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
