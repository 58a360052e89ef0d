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
    seconds = models.FloatField(default=0.0, help_text="time on the item as the client measured it")
    server_seconds = models.FloatField(null=True, blank=True, help_text="time since the item was served, by the server's clock")
    source = models.CharField(max_length=20, default="queue", help_text="the screen the label came from")
    is_test_question = models.BooleanField(default=False)
    client_token = models.UUIDField(default=uuid.uuid4, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["pair", "annotator"], name="one_label_per_annotator")]


class LabelChange(models.Model):
    """One change of a label: who changed whose label, when, from which screen, old → new.

    Nothing about a label is ever overwritten without a row here: an explicit change after a
    conflict, an edit from "My labels", an undo (new value empty = deleted), a duplicate folded
    away when pairs were merged (``source="merge"``)."""

    QUEUE = "queue"
    API = "api"
    ARTICLE = "article"
    MY_LABELS = "my-labels"
    UNDO = "undo"
    MERGE = "merge"
    MIGRATION = "migration"  # a group label of the whole-article view split into per-link labels
    SOURCES = (QUEUE, API, ARTICLE, MY_LABELS, UNDO, MERGE, MIGRATION)

    pair = models.ForeignKey(CandidatePair, on_delete=models.CASCADE, related_name="label_changes")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="label_changes")
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    label = models.ForeignKey(Label, null=True, blank=True, on_delete=models.SET_NULL, related_name="history")
    old_value = models.CharField(max_length=50, blank=True)
    old_ratings = models.JSONField(default=dict, blank=True)
    old_comment = models.TextField(blank=True)
    old_at = models.DateTimeField(null=True, blank=True, help_text="when the old value had been given")
    new_value = models.CharField(max_length=50, blank=True, help_text="empty when the label was deleted (undo)")
    new_ratings = models.JSONField(default=dict, blank=True)
    new_comment = models.TextField(blank=True)
    source = models.CharField(max_length=20, choices=[(s, s) for s in SOURCES])
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["annotator", "pair"], name="label_change_idx")]


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


class QueueFrontier(models.Model):
    """A lower bound of a project's queue, so serving need not walk every pair already taken (issue 37).

    Every pair of the project's queue with an id below ``below`` has all its places taken. Serving
    raises it (``review.queue_serving.advance_frontier``); database triggers lower it in the same
    statement as whatever frees a place or adds a pair to the queue (an assignment skipped, deleted or
    made a test, gold removed, a pair inserted or changed, an annotator excluded, the project's config
    changed) and bump ``version``. A new project's row starts above every pair there is (its own pairs
    all come later). PostgreSQL only: migration 0011 installs the triggers.
    """

    project = models.OneToOneField("annotation.Project", on_delete=models.CASCADE, primary_key=True,
                                   related_name="+")
    below = models.BigIntegerField(default=0)
    version = models.BigIntegerField(default=0)


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
        choices=[(ADJUDICATED, "adjudicated in-house"), (MAJORITY, "majority of crowd votes"), (SINGLE, "single annotator"),
                 (IMPORTED, "imported gold")],
    )
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)


class AdjudicationChange(models.Model):
    """History of a pair's gold: every decision, change, revert and recomputed majority."""

    pair = models.ForeignKey(CandidatePair, on_delete=models.CASCADE, related_name="gold_changes")
    old_value = models.CharField(max_length=50, blank=True, help_text="empty when there was no gold")
    old_provenance = models.CharField(max_length=20, blank=True)
    old_note = models.TextField(blank=True)
    new_value = models.CharField(max_length=50, blank=True, help_text="empty when the gold was removed")
    new_provenance = models.CharField(max_length=20, blank=True)
    new_note = models.TextField(blank=True)
    action = models.CharField(max_length=20, help_text="decide, change, revert, majority, merge")
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]


class ArticleCompletion(models.Model):
    """An annotator declared a document pair of an article exhaustively aligned: every sentence pair
    they did not link counts as "not aligned" (what CRF training uses). Explicit, with who and when."""

    article = models.ForeignKey(Article, on_delete=models.CASCADE, related_name="completions")
    complex_document = models.ForeignKey("annotation.Document", on_delete=models.CASCADE, related_name="+")
    simple_document = models.ForeignKey("annotation.Document", on_delete=models.CASCADE, related_name="+")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="completions")
    seconds = models.FloatField(default=0.0, help_text="time the annotator spent on the article pair")
    completed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["complex_document", "simple_document", "annotator"],
                                               name="one_completion_per_annotator")]


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
