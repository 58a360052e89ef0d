"""An annotator's own links on a document pair, read under the project's label scheme, and the
question an empty completion asks — the pieces the whole-article save
(:mod:`annotation.services.editing.article_alignment`) and the completion of a document pair
(:mod:`annotation.services.editing.completion`) share, below both so neither imports the other.
"""
from __future__ import annotations

import math

from annotation.errors import DomainError
from annotation.label_schemes import class_values, scheme_kind, value_classes
from annotation.models import Document, Label, LabelScheme, Sentence, key_indices
from annotation.services.editing.links import AlignmentInputError, Link, links_from


def scheme_values(scheme: LabelScheme) -> dict[str, str | None]:
    """The first value of the scheme counting as aligned, partial and not (partial may be None)."""
    if not scheme_kind(scheme).gold:
        raise AlignmentInputError(f"the project's label scheme {scheme.name!r} has no aligned / not-aligned values: "
                                  "the whole-article view needs a categorical scheme")
    first = class_values(scheme)
    found: dict[str, str | None] = {kind: first.get(kind) for kind in ("aligned", "partial", "not")}
    missing = [k for k in ("aligned", "not") if found[k] is None]
    if missing:
        raise AlignmentInputError(f"the label scheme {scheme.name!r} has no value counting as {' or '.join(missing)}")
    return found


def counts_as(scheme: LabelScheme) -> dict[str, str | None]:
    return value_classes(scheme) if scheme_kind(scheme).gold else {}


def own_links(user, complex_doc: Document, simple_doc: Document, scheme: LabelScheme) -> list[Link] | None:
    """The links the user's labels on this document pair make (None when the user has no label here)."""
    labels = list(Label.objects.filter(annotator=user, pair__complex_document=complex_doc,
                                       pair__simple_document=simple_doc)
                  .values_list("pair__complex_key", "pair__simple_key", "value"))
    if not labels:
        return None
    counts = counts_as(scheme)
    return links_from((key_indices(c), key_indices(s), counts.get(value)) for c, s, value in labels)


def checked_seconds(seconds) -> float:
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds < 0:
        raise AlignmentInputError("'seconds' must be a non-negative number")
    return float(seconds)


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
    cells = Sentence.objects.filter(document=complex_doc).count() * Sentence.objects.filter(document=simple_doc).count()
    return cells - len(links)
