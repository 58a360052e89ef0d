"""Bounds on what one request computes or returns for an article (hardening: big inputs).

The whole-article views send both documents of a pair, and the paragraph view computes a
complex × simple sentence-similarity matrix (plus paragraph matrices of the same order) when no
links are stored yet — for an article of 300,000 sentences per side that is hundreds of GiB. The
views check first and answer 413 with :class:`ArticleTooLarge`'s message instead:

* ``ARTICLE_MAX_SENTENCES`` — sentences of one document a response carries;
* ``ARTICLE_MAX_SIMILARITY_CELLS`` — complex × simple sentences a request may compare.

    >>> str(ArticleTooLarge("the complex document has 12,000 sentences", "ARTICLE_MAX_SENTENCES", 10000))
    'the complex document has 12,000 sentences; the limit is ARTICLE_MAX_SENTENCES=10000'
"""
from __future__ import annotations

from django.conf import settings

from annotation.errors import DomainError
from annotation.models import Document, Sentence


class ArticleTooLarge(DomainError, ValueError):
    """The document (pair) is over a per-request limit; ``setting`` names it (the views answer 413)."""

    def __init__(self, what: str, setting: str, limit: int) -> None:
        self.setting, self.limit = setting, limit
        super().__init__(f"{what}; the limit is {setting}={limit}")

    status, code = 413, "too_large"

    def payload(self) -> dict:
        return {**super().payload(), "errors": [str(self)], "limit": self.setting}


def max_sentences() -> int:
    return int(getattr(settings, "ARTICLE_MAX_SENTENCES", 10_000))


def max_similarity_cells() -> int:
    return int(getattr(settings, "ARTICLE_MAX_SIMILARITY_CELLS", 4_000_000))


def page_sentences() -> int:
    """Sentences of each document the article page shows at a time (``ARTICLE_PAGE_SENTENCES``, at least 1)."""
    return max(1, int(getattr(settings, "ARTICLE_PAGE_SENTENCES", 300)))


def sentence_count(doc: Document) -> int:
    return Sentence.objects.filter(document=doc).count()


def check_documents(complex_doc: Document, simple_doc: Document) -> tuple[int, int]:
    """Both documents within ``ARTICLE_MAX_SENTENCES``; returns their sentence counts.

    Raises:
        ArticleTooLarge: naming the document and the setting.
    """
    limit = max_sentences()
    counts = sentence_count(complex_doc), sentence_count(simple_doc)
    for side, doc, n in (("complex", complex_doc, counts[0]), ("simple", simple_doc, counts[1])):
        if n > limit:
            raise ArticleTooLarge(f"the {side} document ({doc.level}) has {n:,} sentences, too many to send at once",
                                  "ARTICLE_MAX_SENTENCES", limit)
    return counts


def check_similarity(complex_doc: Document, simple_doc: Document) -> None:
    """The complex × simple sentence matrix a request would compute within ``ARTICLE_MAX_SIMILARITY_CELLS``.

    Raises:
        ArticleTooLarge: with both counts and the setting.
    """
    n, m = check_documents(complex_doc, simple_doc)
    check_cells(n, m, "is too much for one request; store the paragraph links with the project's "
                      "paragraph-alignment job first")


def check_cells(n: int, m: int, why: str) -> None:
    """``n`` complex × ``m`` simple sentences within ``ARTICLE_MAX_SIMILARITY_CELLS``; the background
    paragraph job checks each document pair with this alone (it sends no sentences, so
    ``ARTICLE_MAX_SENTENCES`` does not apply), the request views through :func:`check_similarity`.

    Raises:
        ArticleTooLarge: ``"comparing n × m sentences (n·m) <why>"`` and the setting.
    """
    limit = max_similarity_cells()
    if n * m > limit:
        raise ArticleTooLarge(f"comparing {n:,} × {m:,} sentences ({n * m:,}) {why}", "ARTICLE_MAX_SIMILARITY_CELLS", limit)
