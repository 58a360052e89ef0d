"""Alignment runs, their candidate pairs (n:m), paragraph alignments and model versions."""
from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.db import models
from django.utils import timezone

from .corpus import Document, Paragraph, Sentence
from .jobs import TrackedWork
from .projects import Project


class ModelVersion(models.Model):
    """A trained aligner or encoder: where its artifacts are, what it was trained on, how it scored."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="model_versions")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=50, help_text="crf, cross-encoder, bi-encoder, gain-classifier...")
    path = models.CharField(max_length=1000, help_text="directory of the saved model")
    training_snapshot = models.JSONField(default=dict, blank=True)
    metrics = models.JSONField(default=dict, blank=True)
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="unique_model_name")]

    def __str__(self) -> str:
        return self.name


class AlignmentRun(TrackedWork):
    """One execution of an aligner over (part of) a project's corpus."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="runs")
    method = models.CharField(max_length=50)
    params = models.JSONField(default=dict, blank=True)
    level_pairs = models.JSONField(default=list, blank=True, help_text="[[complex_level, simple_level], ...]; empty = adjacent levels")
    model_version = models.ForeignKey(ModelVersion, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs")
    queue = models.CharField(max_length=20, default="gpu")
    articles_total = models.PositiveIntegerField(default=0)
    articles_done = models.PositiveIntegerField(default=0)
    pair_count = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.method} run #{self.pk} ({self.status})"


def indices_key(indices: Iterable[int]) -> str:
    """Canonical text form of a set of sentence indices: sorted, comma-separated."""
    return ",".join(str(i) for i in sorted(set(indices)))


class CandidatePair(models.Model):
    """An n:m link proposed by a run (or created by an annotator) between two documents.

    The sentence sets are stored both as a canonical key (for the uniqueness constraint that makes
    re-running a run idempotent, on SQLite and PostgreSQL alike) and as rows of ``PairSentence``.
    """

    run = models.ForeignKey(AlignmentRun, null=True, blank=True, on_delete=models.CASCADE, related_name="pairs")
    article = models.ForeignKey("annotation.Article", on_delete=models.CASCADE, related_name="pairs")
    complex_document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    simple_document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    complex_key = models.CharField(max_length=500)
    simple_key = models.CharField(max_length=500)
    score = models.FloatField(null=True, blank=True)
    predicted_label = models.CharField(max_length=50, blank=True)
    features = models.JSONField(default=dict, blank=True)
    origin = models.CharField(max_length=20, default="model", help_text="model, candidate, manual, derived, import")
    created_at = models.DateTimeField(default=timezone.now)
    sentences = models.ManyToManyField(Sentence, through="PairSentence", related_name="pairs")

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "complex_document", "simple_document", "complex_key", "simple_key"],
                name="unique_pair_per_run",
            ),
            # Pairs outside any run (imported gold, manual links): NULL run ids never collide, so
            # they get their own partial unique index.
            models.UniqueConstraint(
                fields=["complex_document", "simple_document", "complex_key", "simple_key"],
                condition=models.Q(run__isnull=True),
                name="unique_pair_without_run",
            ),
        ]
        indexes = [models.Index(fields=["article", "run"])]

    @property
    def complex_indices(self) -> list[int]:
        return [int(i) for i in self.complex_key.split(",") if i]

    @property
    def simple_indices(self) -> list[int]:
        return [int(i) for i in self.simple_key.split(",") if i]

    def __str__(self) -> str:
        return f"pair #{self.pk} C[{self.complex_key}] → S[{self.simple_key}]"


class Side(models.TextChoices):
    COMPLEX = "complex", "Complex"
    SIMPLE = "simple", "Simple"


class PairSentence(models.Model):
    pair = models.ForeignKey(CandidatePair, on_delete=models.CASCADE, related_name="members")
    sentence = models.ForeignKey(Sentence, on_delete=models.CASCADE, related_name="+")
    side = models.CharField(max_length=10, choices=Side.choices)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["pair", "sentence"], name="unique_pair_sentence")]


class ParagraphAlignment(models.Model):
    """A link between a complex and a simple paragraph, automatic or made/confirmed by a person."""

    AUTO = "auto"
    MANUAL = "manual"

    run = models.ForeignKey(AlignmentRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="paragraph_links")
    complex_paragraph = models.ForeignKey(Paragraph, on_delete=models.CASCADE, related_name="+")
    simple_paragraph = models.ForeignKey(Paragraph, on_delete=models.CASCADE, related_name="+")
    source = models.CharField(max_length=10, choices=[(AUTO, "automatic"), (MANUAL, "manual")], default=AUTO)
    active = models.BooleanField(default=True, help_text="false once an annotator removed the link")
    score = models.FloatField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["complex_paragraph", "simple_paragraph"], name="unique_paragraph_link")
        ]
