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

from annotation.errors import DomainError
from annotation.models import Article, ArticleCompletion, Document, Label, Project, Sentence, key_indices
from annotation.services.editing.article_alignment import checked_seconds, counts_as, own_links, scheme_values
from annotation.services.editing.links import Group, Link, groups, links_from
from annotation.services.review import qc
from annotation.services.review.gold_reading import completion_effect
from annotation.services.review.label_input import MAX_SECONDS


class EmptyCompletion(DomainError):
    """Marking a document pair complete without a single link of the user's: asked first
    (``allow_empty=True`` confirms). The question names exactly what will be stored
    (:func:`annotation.services.review.gold_reading.completion_effect`): the user's "not aligned" on
    every sentence pair, the imported links among them included — their vote outweighs imported gold,
    not adjudicated gold nor other annotators' votes."""

    def __init__(self, pairs: int, effect: dict | None = None, *, saving: bool = False) -> None:
        self.pairs = pairs
        self.effect = effect or {}
        imported, adjudicated = self.effect.get("imported_links", 0), self.effect.get("adjudicated", 0)
        action = ("This document pair is marked complete and the save leaves you no link in it: saving"
                  if saving else "You have no links in this document pair: marking it complete")
        parts = [f"{action} stores your \"not aligned\" on all {pairs} of its sentence pairs"]
        if imported:
            parts.append(f", including the {imported} imported link{'s' if imported != 1 else ''} (your \"not "
                         "aligned\" outweighs imported gold: with no other vote they become not aligned)")
        if adjudicated:
            parts.append(f"; {adjudicated} adjudicated pair{'s' if adjudicated != 1 else ''} keep their gold")
        parts.append(". Other annotators' votes still count. Confirm to "
                     + ("save anyway (o reopens it)." if saving else "mark it complete anyway."))
        super().__init__("".join(parts))

    status, code = 409, "empty"

    def payload(self) -> dict:
        return {**super().payload(), "not_aligned": self.pairs, "imported_links": self.effect.get("imported_links", 0),
                "adjudicated": self.effect.get("adjudicated", 0)}


def not_aligned_if_completed(user, complex_doc: Document, simple_doc: Document) -> int:
    """How many sentence pairs of the document pair would count as "not aligned" once the user marks
    it complete: every complex × simple sentence pair the user's links leave out."""
    links = own_links(user, complex_doc, simple_doc, complex_doc.article.project.label_scheme) or []
    return Sentence.objects.filter(document=complex_doc).count() * Sentence.objects.filter(document=simple_doc).count() - len(links)


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
