"""Stored documents read back: the one reading of the Paragraph / Sentence rows.

Runs, scoring and WIVICO's window means, training, paragraph correction, mining and the export
all turn a stored :class:`~annotation.models.Document` into the engine's input here
(:func:`engine_pair`, :func:`engine_documents`: paragraphs of sentences, in document order), and
the article and paragraph views show the same reading (:func:`document_payload`). A pair's texts
(its sentences joined in document order) come from :func:`pair_sentences` / :func:`pair_texts`.

Sentence ``index`` is the sentence's position in its document (0, 1, ...), which is the index the
engine's links use.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

from annotation.models import Article, Document, PairSentence, Sentence, Side
from workers.engine import ArticlePair
from workers.engine import Document as EngineDocument

CHUNK = 5000  # sentence rows fetched at a time when streaming


class StoredSentence(NamedTuple):
    index: int  # Sentence.index: the position in the document
    paragraph: int  # Paragraph.index
    text: str


def _rows(**where):
    return (Sentence.objects.filter(**where).order_by("document_id", "index")
            .values_list("document_id", "index", "paragraph__index", "text"))


def _by_document(rows: Iterable[tuple[int, int, int, str]]) -> Iterator[tuple[int, list[StoredSentence]]]:
    current: int | None = None
    sentences: list[StoredSentence] = []
    for doc_id, index, paragraph, text in rows:
        if doc_id != current:
            if current is not None:
                yield current, sentences
            current, sentences = doc_id, []
        sentences.append(StoredSentence(index, paragraph, text))
    if current is not None:
        yield current, sentences


def stream_sentences(**where) -> Iterator[tuple[int, list[StoredSentence]]]:
    """``(document id, its sentences in order)`` for every document with a sentence matching
    ``where`` (``Sentence`` lookups, e.g. ``document__article__project=project``), one document at
    a time, the rows streamed in chunks: memory holds one document, whatever the corpus."""
    return _by_document(_rows(**where).iterator(chunk_size=CHUNK))


def document_sentences(document_ids: Iterable[int]) -> dict[int, list[StoredSentence]]:
    """``{document id: its sentences in order}`` for every given id (one without sentences: ``[]``)."""
    ids = list(dict.fromkeys(document_ids))
    out: dict[int, list[StoredSentence]] = {d: [] for d in ids}
    if ids:
        out.update(_by_document(_rows(document_id__in=ids)))
    return out


def sentence_texts(document_ids: Iterable[int]) -> dict[int, dict[int, str]]:
    """``{document id: {sentence index: text}}``."""
    return {d: {s.index: s.text for s in rows} for d, rows in document_sentences(document_ids).items()}


def paragraphs(sentences: Sequence[StoredSentence]) -> list[tuple[int, list[StoredSentence]]]:
    """``[(paragraph index, its sentences)]`` in document order.

    Example:
        >>> rows = [StoredSentence(0, 0, "A."), StoredSentence(1, 0, "B."), StoredSentence(2, 3, "C.")]
        >>> [(p, [s.text for s in ss]) for p, ss in paragraphs(rows)]
        [(0, ['A.', 'B.']), (3, ['C.'])]
    """
    out: list[tuple[int, list[StoredSentence]]] = []
    for s in sentences:
        if not out or out[-1][0] != s.paragraph:
            out.append((s.paragraph, []))
        out[-1][1].append(s)
    return out


def to_engine(sentences: Sequence[StoredSentence], level: str | None = None) -> EngineDocument:
    """The engine's :class:`~workers.engine.types.Document` of one stored document's sentences."""
    return EngineDocument(paragraphs=tuple(tuple(s.text for s in p) for _, p in paragraphs(sentences)), level=level)


def engine_documents(documents: Iterable[Document | int]) -> dict[int, EngineDocument]:
    """``{document id: the engine's Document}`` of stored documents (objects or ids), in two queries."""
    documents = list(documents)
    ids = [d if isinstance(d, int) else d.pk for d in documents]
    levels = {d.pk: d.level for d in documents if not isinstance(d, int)}
    missing = [d for d in ids if d not in levels]
    if missing:
        levels.update(Document.objects.filter(pk__in=missing).values_list("pk", "level"))
    return {d: to_engine(rows, levels.get(d)) for d, rows in document_sentences(ids).items()}


def engine_document(document: Document | int) -> EngineDocument:
    """The engine's Document of one stored document."""
    return next(iter(engine_documents([document]).values()))


def engine_pair(complex_doc: Document | int, simple_doc: Document | int, *, id: str | None = None,
                **fields) -> ArticlePair:
    """The engine's input for one document pair (id ``"<complex pk>-<simple pk>"`` unless given;
    ``fields``: the rest of :class:`~workers.engine.types.ArticlePair`, e.g. ``gold``)."""
    c = complex_doc if isinstance(complex_doc, int) else complex_doc.pk
    s = simple_doc if isinstance(simple_doc, int) else simple_doc.pk
    docs = engine_documents([complex_doc, simple_doc])
    return ArticlePair(id=id or f"{c}-{s}", complex=docs[c], simple=docs[s], **fields)


def document_payload(doc: Document) -> dict:
    """A document as the whole-article and paragraph views show it: paragraphs of indexed sentences."""
    rows = document_sentences([doc.pk])[doc.pk]
    return {"id": doc.pk, "level": doc.level,
            "paragraphs": [{"index": p, "sentences": [{"index": s.index, "text": s.text} for s in ss]}
                           for p, ss in paragraphs(rows)],
            "sentence_count": len(rows)}


def document_pair_payload(article: Article, complex_doc: Document, simple_doc: Document) -> dict:
    """The part the whole-article and paragraph views share: the article, both documents and the
    article's versions (to switch between level pairs)."""
    return {
        "article": {"id": article.pk, "title": article.title, "project": article.project_id},
        "complex": document_payload(complex_doc),
        "simple": document_payload(simple_doc),
        "versions": [{"id": d.pk, "level": d.level} for d in article.documents.order_by("rank")],
    }


def pair_sentences(pair_ids: Iterable[int]) -> dict[int, tuple[list[str], list[str]]]:
    """``{pair id: (complex sentences, simple sentences)}`` in document order."""
    sides: dict[int, dict[str, list[tuple[int, str]]]] = defaultdict(lambda: {Side.COMPLEX: [], Side.SIMPLE: []})
    rows = (PairSentence.objects.filter(pair_id__in=list(pair_ids))
            .values_list("pair_id", "side", "sentence__index", "sentence__text"))
    for pair_id, side, index, text in rows.iterator(chunk_size=CHUNK):
        sides[pair_id][side].append((index, text))
    return {pid: ([t for _, t in sorted(s[Side.COMPLEX])], [t for _, t in sorted(s[Side.SIMPLE])])
            for pid, s in sides.items()}


def pair_texts(pair_ids: Iterable[int]) -> dict[int, tuple[str, str]]:
    """``{pair id: (complex text, simple text)}``, sentences joined in document order."""
    return {pid: (" ".join(c), " ".join(s)) for pid, (c, s) in pair_sentences(pair_ids).items()}


__all__ = ["StoredSentence", "document_pair_payload", "document_payload", "document_sentences", "engine_document", "engine_documents",
           "engine_pair", "pair_sentences", "pair_texts", "paragraphs", "sentence_texts", "stream_sentences",
           "to_engine"]
