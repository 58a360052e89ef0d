"""Declaring a document pair's alignment complete (exhaustive), reopening it, and reading the
complete document pairs with their links (what CRF training uses).

Pairs an annotator did not link count as "not aligned" only once they declare the document pair
complete (:func:`mark_complete`, stored with who, when and the time spent; :func:`reopen` withdraws
it); see :mod:`annotation.services.editing.article_alignment` for the links themselves.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction

from annotation.models import Article, ArticleCompletion, Document, Label, Project, key_indices
from annotation.services.editing.links import Group, Link, groups, links_from
from annotation.services.editing.own_links import (
    EmptyCompletion,
    checked_seconds,
    counts_as,
    not_aligned_if_completed,
    own_links,
    scheme_values,
)
from annotation.services.review import qc
from annotation.services.review.gold_reading import completion_effect
from annotation.services.review.label_input import MAX_SECONDS


def mark_complete(user, article: Article, complex_doc: Document, simple_doc: Document, *,
                  seconds: float = 0.0, allow_empty: bool = False) -> tuple[ArticleCompletion, bool]:
    """Declare the user's alignment of the document pair exhaustive: from now on every pair they did
    not link counts as not aligned. Returns (completion, created); marking it again keeps the first
    declaration. ``seconds``: time the annotator spent on the page (capped at a day). A document pair
    without any link of the user's is marked complete only with ``allow_empty=True`` (one key press
    would otherwise make all its pairs "not aligned" gold).

    Raises AlignmentInputError when the project's scheme has no aligned/not values,
    ``qc.AnnotatorExcluded`` for an excluded annotator and :class:`EmptyCompletion` for an empty
    document pair without ``allow_empty``.
    """
    scheme_values(article.project.label_scheme)
    seconds = min(checked_seconds(seconds), MAX_SECONDS)
    qc.ensure_not_excluded(user, article.project)
    existing = ArticleCompletion.objects.filter(complex_document=complex_doc, simple_document=simple_doc, annotator=user)
    try:
        with transaction.atomic():
            # the lock a links save takes (article_alignment.save_links): a save removing the last link and
            # this check cannot interleave, so a complete pair never ends up with no link unasked
            Document.objects.select_for_update().filter(pk=complex_doc.pk).first()
            if (not allow_empty and not existing.exists()
                    and not own_links(user, complex_doc, simple_doc, article.project.label_scheme)):
                raise EmptyCompletion(not_aligned_if_completed(user, complex_doc, simple_doc),
                                      completion_effect(complex_doc.pk, simple_doc.pk))
            return ArticleCompletion.objects.get_or_create(
                complex_document=complex_doc, simple_document=simple_doc, annotator=user,
                defaults={"article": article, "seconds": seconds})
    except IntegrityError:  # marked concurrently (a double click)
        return existing.get(), False


def reopen(user, complex_doc: Document, simple_doc: Document) -> bool:
    """Withdraw the user's completion of the document pair (their labels stay); False if it was open."""
    deleted, _ = ArticleCompletion.objects.filter(complex_document=complex_doc, simple_document=simple_doc,
                                                  annotator=user).delete()
    return bool(deleted)


@dataclass(frozen=True)
class CompletedPair:
    """A document pair an annotator declared complete, with their links: every sentence pair of the
    two documents outside ``links`` is not aligned. ``links`` are per link (1:1, each with its own
    label); ``groups`` the splits/fusions/n:m groups they make."""

    article_id: int
    complex_document: Document
    simple_document: Document
    annotator_id: int
    annotator: str
    links: list[Link]
    completed_at: datetime
    seconds: float

    @property
    def groups(self) -> list[Group]:
        return groups(self.links)


def complete_article_pairs(project: Project) -> list[CompletedPair]:
    """The project's exhaustively annotated document pairs, one per (document pair, annotator), in
    article order, with the annotator's current per-link links (their labels, read as the
    whole-article view shows them: :func:`links.links_from`). Three queries whatever the size."""
    completions = list(ArticleCompletion.objects.filter(article__project=project)
                       .select_related("complex_document", "simple_document", "annotator")
                       .order_by("article_id", "complex_document__rank", "simple_document__rank", "annotator_id"))
    if not completions:
        return []
    counts = counts_as(project.label_scheme)
    rows_of: dict[tuple[int, int, int], list[tuple[list[int], list[int], str | None]]] = defaultdict(list)
    rows = (Label.objects.filter(pair__article_id__in={c.article_id for c in completions},
                                 annotator_id__in={c.annotator_id for c in completions})
            .values_list("annotator_id", "pair__complex_document_id", "pair__simple_document_id",
                         "pair__complex_key", "pair__simple_key", "value"))
    for annotator_id, complex_id, simple_id, complex_key, simple_key, value in rows:
        rows_of[(complex_id, simple_id, annotator_id)].append((key_indices(complex_key), key_indices(simple_key),
                                                               counts.get(value)))
    return [CompletedPair(article_id=c.article_id, complex_document=c.complex_document, simple_document=c.simple_document,
                          annotator_id=c.annotator_id, annotator=c.annotator.get_username(),
                          links=links_from(rows_of.get((c.complex_document_id, c.simple_document_id, c.annotator_id), [])),
                          completed_at=c.completed_at, seconds=c.seconds)
            for c in completions]
