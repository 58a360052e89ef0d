"""The corpus: articles, their versions (documents), paragraphs and sentences."""
from __future__ import annotations

from django.db import models

from .projects import Project


class Article(models.Model):
    """A group of versions of one text (e.g. a Newsela article at levels 0..4)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="articles")
    title = models.CharField(max_length=500)
    source = models.CharField(max_length=200, blank=True, help_text="file or corpus it came from")
    meta = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["project", "title"], name="unique_article_title")]

    def __str__(self) -> str:
        return self.title


class Document(models.Model):
    """One version of an article. ``level`` is free text (``0``..``4``, ``adv``, ``complex``,
    ``summary``...); ``rank`` orders levels from most complex (0) to simplest."""

    article = models.ForeignKey(Article, on_delete=models.CASCADE, related_name="documents")
    level = models.CharField(max_length=50)
    rank = models.PositiveIntegerField(default=0)
    meta = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["article_id", "rank"]
        constraints = [models.UniqueConstraint(fields=["article", "level"], name="unique_level_per_article")]

    def __str__(self) -> str:
        return f"{self.article.title} [{self.level}]"


class Paragraph(models.Model):
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="paragraphs")
    index = models.PositiveIntegerField()

    class Meta:
        ordering = ["document_id", "index"]
        constraints = [models.UniqueConstraint(fields=["document", "index"], name="unique_paragraph_index")]


class Sentence(models.Model):
    """``index`` is the position in the document's flattened sentence list (SPEC §4)."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="sentences")
    paragraph = models.ForeignKey(Paragraph, on_delete=models.CASCADE, related_name="sentences")
    index = models.PositiveIntegerField()
    text = models.TextField()

    class Meta:
        ordering = ["document_id", "index"]
        constraints = [models.UniqueConstraint(fields=["document", "index"], name="unique_sentence_index")]

    def __str__(self) -> str:
        return self.text[:80]
