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
    job = models.OneToOneField("annotation.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="model_version")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="unique_model_name")]

    def __str__(self) -> str:
        return self.name


MINING_METHOD = "muss-corpus"
"""The run method that mines a whole project's corpus in chunks (``services/alignment/mining.py``)."""


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


class RunChunk(models.Model):
    """One chunk of an alignment run: a slice of its document pairs that one worker aligns and saves
    (``services/alignment/run_chunks.py``). ``work`` lists ``[article, complex document, simple
    document]`` ids; status, heartbeat and attempts follow the run's own liveness rules."""

    run = models.ForeignKey(AlignmentRun, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    work = models.JSONField(default=list)
    sentences = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=20, default="queued", db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    worker = models.CharField(max_length=200, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    pair_count = models.PositiveIntegerField(default=0)
    stats = models.JSONField(default=dict, blank=True, help_text="timings and counters of the attempt that finished it")

    class Meta:
        ordering = ["run", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="unique_run_chunk")]

    def __str__(self) -> str:
        return f"run #{self.run_id} chunk {self.index} ({self.status})"


def indices_key(indices: Iterable[int]) -> str:
    """Canonical text form of a set of sentence indices: sorted, comma-separated."""
    return ",".join(str(i) for i in sorted(set(indices)))


def key_indices(key: str) -> list[int]:
    """The sentence indices of an :func:`indices_key` (``"0,2"`` → ``[0, 2]``; ``""`` → ``[]``)."""
    return [int(i) for i in key.split(",") if i]


class CandidatePair(models.Model):
    """A project-level sentence pair: two sets of sentences of two documents of one article.

    This is what people label. It exists once per (complex document, simple document, complex
    sentence set, simple sentence set), whoever proposed it: every run that predicts it attaches a
    :class:`Prediction`, annotators' labels, assignments, gold and comments hang off the pair itself.
    ``score`` and ``predicted_label`` repeat the latest run's prediction (what the queue and filters
    show); ``features`` are the pair's attributes (ACCESS, scoring jobs, the latest run's features).
    The sentence sets are stored both as a canonical key (the uniqueness constraint) and as rows of
    ``PairSentence``.
    """

    article = models.ForeignKey("annotation.Article", on_delete=models.CASCADE, related_name="pairs")
    complex_document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    simple_document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    complex_key = models.CharField(max_length=500)
    simple_key = models.CharField(max_length=500)
    score = models.FloatField(null=True, blank=True)
    predicted_label = models.CharField(max_length=50, blank=True)
    features = models.JSONField(default=dict, blank=True)
    origin = models.CharField(max_length=20, default="model", help_text="model, candidate, manual, derived, import, mined")
    identical = models.BooleanField(default=False, help_text="both sides are the same text after normalisation")
    uncertainty = models.FloatField(null=True, blank=True, db_index=True,
                                    help_text="how unsure the latest model was (active learning: highest first)")
    created_at = models.DateTimeField(default=timezone.now)
    sentences = models.ManyToManyField(Sentence, through="PairSentence", related_name="pairs")
    runs = models.ManyToManyField(AlignmentRun, through="Prediction", related_name="predicted_pairs")

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["complex_document", "simple_document", "complex_key", "simple_key"],
                name="unique_sentence_pair",
            ),
        ]
        indexes = [models.Index(fields=["article", "id"], name="pair_article_idx")]

    @property
    def complex_indices(self) -> list[int]:
        return key_indices(self.complex_key)

    @property
    def simple_indices(self) -> list[int]:
        return key_indices(self.simple_key)

    def __str__(self) -> str:
        return f"pair #{self.pk} C[{self.complex_key}] → S[{self.simple_key}]"


class Prediction(models.Model):
    """What one run predicted for one sentence pair (at most one per run × pair)."""

    run = models.ForeignKey(AlignmentRun, on_delete=models.CASCADE, related_name="predictions")
    pair = models.ForeignKey(CandidatePair, on_delete=models.CASCADE, related_name="predictions")
    score = models.FloatField(null=True, blank=True)
    predicted_label = models.CharField(max_length=50, blank=True)
    features = models.JSONField(default=dict, blank=True)
    rank = models.PositiveIntegerField(null=True, blank=True, help_text="order of the pair in the run's output")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["run", "pair"], name="one_prediction_per_run")]
        indexes = [models.Index(fields=["pair", "run"], name="prediction_pair_idx")]


class RunComparison(models.Model):
    """What :func:`annotation.services.alignment.run_comparison.compare` found between two finished runs,
    stored (issue 37: at a million predictions a run the first comparison reads both runs for seconds; it
    survives a restart here). ``state`` is the digest of the marks it was computed under
    (``run_comparison.finished_state``): a row whose state is no longer current is computed again.
    ``summary``: the summary part of the answer; ``articles``: ``[[article, added, removed, label
    changed], ...]`` of every article with a change, in id order (a page of changes at any offset reads
    only the articles that page covers)."""

    old = models.ForeignKey(AlignmentRun, on_delete=models.CASCADE, related_name="+")
    new = models.ForeignKey(AlignmentRun, on_delete=models.CASCADE, related_name="+")
    state = models.CharField(max_length=64)
    summary = models.JSONField(default=dict)
    articles = models.JSONField(default=list)
    seconds = models.FloatField(default=0.0, help_text="how long computing it took")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["old", "new"], name="one_comparison_per_run_pair")]


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


class ParagraphProposal(models.Model):
    """An annotator's correction of a document pair's paragraph links, waiting for a researcher
    (unless the project lets annotators' corrections apply directly: ``config["paragraph_corrections"]
    = "direct"``). ``links`` is the whole proposed set ``[[complex_paragraph_index, simple_paragraph_index], ...]``."""

    PENDING = "pending"
    ACCEPTED = "accepted"
    REJECTED = "rejected"

    article = models.ForeignKey("annotation.Article", on_delete=models.CASCADE, related_name="paragraph_proposals")
    complex_document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    simple_document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    links = models.JSONField(default=list)
    proposed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    status = models.CharField(max_length=10, default=PENDING,
                              choices=[(PENDING, "pending"), (ACCEPTED, "accepted"), (REJECTED, "rejected")])
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
