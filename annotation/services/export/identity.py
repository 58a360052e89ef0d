"""What an imported file said about its own rows, kept so that every gold format writes it back
(issue 35 §2): each document's sentence ids as the file numbered them, each sentence pair's GLEU cell
as written, and each document pair's row order. A ``wiki-manual`` (or ``hf`` with sentence ids)
import keeps them in the article's and documents' ``meta`` (``importing.formats.wiki_manual``); the
``articles`` and ``hf`` exports carry them (``sentence_ids``, ``gleu``, ``row_order``) and their
imports keep them again, so the ``tsv`` export of any of those projects writes the source file's rows,
byte for byte, in its order.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from annotation.services.corpus.importing.formats.wiki_manual import GLEU_KEY, IDS_KEY, ORDER_KEY
from annotation.services.export.records import ArticleBatch


@dataclass(slots=True)
class SourceIdentity:
    """One article's kept identity: ``ids`` document → ``[[paragraph, sentence], ...]`` (only documents
    whose sentences still match them), ``gleu`` ``"<complex level>|<simple level>"`` → ``"ci,si"`` → the
    cell, ``order`` the same key → ``"simple"`` / ``"complex"`` / ``[[ci, si], ...]``."""

    title: str
    ids: dict[int, list] = field(default_factory=dict)
    gleu: dict[str, dict[str, str]] = field(default_factory=dict)
    order: dict[str, object] = field(default_factory=dict)

    def sentence_ids(self, document: int, level: str) -> list[str] | None:
        """The document's sentence ids as the source wrote them (``<article>-<level>-<paragraph>-<sentence>``)."""
        kept = self.ids.get(document)
        return None if kept is None else [f"{self.title}-{level}-{p}-{s}" for p, s in kept]

    def of_pair(self, complex_level: str, simple_level: str) -> tuple[dict[str, str], object]:
        """The GLEU cells and the row order of one document pair (empty / None when not kept)."""
        key = f"{complex_level}|{simple_level}"
        return self.gleu.get(key) or {}, self.order.get(key)


def source_identity(batch: ArticleBatch) -> SourceIdentity:
    """What the import of ``batch``'s article kept of its file (nothing for an article typed in or
    imported from a format without ids). Read from ``batch.kept`` when the export's source read it for
    its chunk of articles (two queries a chunk instead of two an article: issue 37), else here."""
    kept_ids, meta = batch.kept if batch.kept is not None else read_kept([batch.article_id], list(batch.documents)).get(
        batch.article_id, ({}, {}))
    out = SourceIdentity(batch.title)
    for pk, kept in kept_ids.items():
        if pk in batch.documents and isinstance(kept, list) and len(kept) == sum(
                len(p) for p in batch.documents[pk]["paragraphs"]):
            out.ids[pk] = kept
    if out.ids:  # GLEU cells and orders index the kept sentences: meaningless once the documents changed
        out.gleu = meta.get(GLEU_KEY) or {}
        out.order = meta.get(ORDER_KEY) or {}
    return out


def read_kept(articles: list[int], documents: list[int] | None = None) -> dict[int, tuple[dict[int, list], dict]]:
    """Article id → ``(document id → the sentence ids its import kept, the article's meta)`` for the
    ``articles`` (their ``documents`` only, when given) that kept any: two queries, whatever the number
    of articles; an article without kept ids is left out (nothing to read back)."""
    from annotation.models import Article, Document

    where = {"pk__in": documents} if documents is not None else {"article_id__in": articles}
    found: dict[int, tuple[dict[int, list], dict]] = {}
    for pk, article_id, meta in (Document.objects.filter(**where, meta__has_key=IDS_KEY)
                                 .values_list("pk", "article_id", "meta")):
        found.setdefault(article_id, ({}, {}))[0][pk] = meta[IDS_KEY]
    for pk, meta in Article.objects.filter(pk__in=list(found)).values_list("pk", "meta"):
        found[pk] = (found[pk][0], meta or {})
    return found
