"""Which document pairs are exhaustively annotated — the ONE answer training and model metrics use.

A document pair (one complex and one simple version of an article) is *exhaustive* when every
sentence pair of it has an answer: pairs nobody linked are "not aligned". That is true of

* document pairs an annotator declared complete in the whole-article view (an
  :class:`~annotation.models.ArticleCompletion`; annotators excluded by quality control do not
  count), and
* document pairs whose imported gold is exhaustive (:func:`imported_exhaustive`).

Training (``services/training/dataset.py``) trains the CRF on these, and the test/dev metrics of a
model version are measured only on these (issue 18 §5): a document pair with sparse gold would
count every true link the file does not list as a false positive. Code that learns of another
kind of exhaustive annotation (an import's gold meaning, a curation step) extends this module, not
its callers. It lives in the review area so that every higher area (editing, scoring, export,
training) can use it.
"""
from __future__ import annotations

from typing import NamedTuple

from annotation.models import Adjudication, Article, ArticleCompletion, CandidatePair, Document, Membership, Project


class ExhaustivePair(NamedTuple):
    """An exhaustively annotated document pair: who declared it complete, whether gold was imported."""

    article_id: int
    complex_document_id: int
    simple_document_id: int
    annotators: list[int]
    imported: bool


def imported_exhaustive(project: Project) -> set[tuple[int, int, int]]:
    """``{(article, complex doc, simple doc)}`` whose imported gold is exhaustive.

    Only gold the import declared exhaustive counts (issue 18 §3: a file's gold may be exhaustive,
    sparse or predictions); the import's record of that meaning is read here and nowhere else.
    """
    # the import keeps the meaning as each article's meta["gold_import"] (importing/writer.py):
    # {"meaning": "exhaustive", "document_pairs": [[complex level, simple level], ...]}
    found: set[tuple[int, int, int]] = set()
    stamped = Article.objects.filter(project=project, meta__has_key="gold_import")
    exhaustive = dict(stamped.filter(meta__gold_import__meaning="exhaustive").values_list("pk", "meta"))
    docs: dict[tuple[int, str], int] = {(a, level): pk for pk, a, level in Document.objects
                                        .filter(article_id__in=list(exhaustive)).values_list("pk", "article_id", "level")}
    for article_id, meta in exhaustive.items():
        for c, s in meta["gold_import"].get("document_pairs") or []:
            if (article_id, str(c)) in docs and (article_id, str(s)) in docs:
                found.add((article_id, docs[(article_id, str(c))], docs[(article_id, str(s))]))
    # gold imported without a recorded meaning (before issue 18, or written by a script) keeps its
    # old reading: the document pairs it covers count as exhaustive
    # (joins, no IN-subqueries: PostgreSQL planned those as a nested loop over a just-written import's
    # rows, with no statistics yet, and took minutes; no ordering, so DISTINCT is over the three ids)
    pairs = (CandidatePair.objects.filter(article__project=project, gold__provenance=Adjudication.IMPORTED)
             .exclude(article__meta__has_key="gold_import").order_by())
    found.update(pairs.values_list("article_id", "complex_document_id", "simple_document_id").distinct())
    return found


def exhaustive_pairs(project: Project) -> list[ExhaustivePair]:
    """Every exhaustively annotated document pair of the project, in (article, documents) order."""
    found: dict[tuple[int, int, int], tuple[list[int], bool]] = {}
    excluded = Membership.objects.excluded(project)  # quality control applies to completed article pairs too
    for article, c, s, annotator in (ArticleCompletion.objects.filter(article__project=project)
                                     .exclude(annotator_id__in=excluded)
                                     .values_list("article_id", "complex_document_id", "simple_document_id",
                                                  "annotator_id")):
        found.setdefault((article, c, s), ([], False))[0].append(annotator)
    for key in imported_exhaustive(project):
        annotators, _ = found.get(key, ([], False))
        found[key] = (annotators, True)
    return [ExhaustivePair(a, c, s, annotators, imported) for (a, c, s), (annotators, imported) in sorted(found.items())]


def exhaustive_articles(project: Project) -> set[int]:
    """Ids of the articles with at least one exhaustively annotated document pair."""
    return {p.article_id for p in exhaustive_pairs(project)}


__all__ = ["ExhaustivePair", "exhaustive_articles", "exhaustive_pairs", "imported_exhaustive"]
