"""Writing parsed articles to the database: bulk inserts, inside the caller's transaction."""
from __future__ import annotations

from dataclasses import dataclass, field

from annotation.models import (
    Adjudication,
    Article,
    CandidatePair,
    Document,
    PairSentence,
    Paragraph,
    Project,
    Sentence,
    Side,
    indices_key,
)
from annotation.services.corpus.importing.base import ParsedArticle
from workers.engine.text import is_identical

BATCH = 1000


@dataclass
class Written:
    articles: int = 0
    documents: int = 0
    sentences: int = 0
    pairs: int = 0
    article_ids: list[int] = field(default_factory=list)

    def add(self, other: Written) -> None:
        self.articles += other.articles
        self.documents += other.documents
        self.sentences += other.sentences
        self.pairs += other.pairs
        self.article_ids.extend(other.article_ids)


def write_articles(project: Project, parsed: list[ParsedArticle], *, source: str = "", token: str = "") -> Written:
    """Insert ``parsed`` (already validated) with a handful of bulk queries per table. ``token``
    (the import's id) is kept as each article's ``meta["import"]``."""
    stamp = {"import": token} if token else {}
    articles = Article.objects.bulk_create(
        [
            Article(project=project, title=a.title, source=(source or a.file)[:200],
                    meta={"file": a.file, **a.meta, **stamp})
            for a in parsed
        ],
        batch_size=BATCH,
    )
    # Children are built with foreign-key ids (``article_id=``), not model instances: the ORM's
    # related-object bookkeeping was most of the time an import spent.
    documents = Document.objects.bulk_create(
        [
            Document(article_id=article.pk, level=d.level, rank=d.rank, meta=d.meta)
            for a, article in zip(parsed, articles)
            for d in a.documents
        ],
        batch_size=BATCH,
    )
    doc_iter = iter(documents)
    docs_by_level = [{d.level: next(doc_iter).pk for d in a.documents} for a in parsed]

    paragraph_rows: list[Paragraph] = []
    for a, docs in zip(parsed, docs_by_level):
        for d in a.documents:
            paragraph_rows.extend(Paragraph(document_id=docs[d.level], index=i) for i in range(len(d.paragraphs)))
    paragraphs = iter(Paragraph.objects.bulk_create(paragraph_rows, batch_size=BATCH))

    sentence_rows: list[Sentence] = []
    by_doc: dict[int, list[Sentence]] = {}
    for a, docs in zip(parsed, docs_by_level):
        for d in a.documents:
            document_id = docs[d.level]
            rows = by_doc[document_id] = []
            for sentences in d.paragraphs:
                paragraph_id = next(paragraphs).pk
                for text in sentences:
                    rows.append(Sentence(document_id=document_id, paragraph_id=paragraph_id, index=len(rows), text=text))
            sentence_rows.extend(rows)
    Sentence.objects.bulk_create(sentence_rows, batch_size=BATCH)

    pair_rows: list[CandidatePair] = []
    pair_specs = []
    for a, article, docs in zip(parsed, articles, docs_by_level):
        for p in a.pairs:
            c_doc, s_doc = docs[p.complex_level], docs[p.simple_level]
            pair_rows.append(
                CandidatePair(
                    article_id=article.pk, complex_document_id=c_doc, simple_document_id=s_doc,
                    complex_key=indices_key(p.complex), simple_key=indices_key(p.simple), origin="import",
                    score=p.score, features=dict(p.features),
                    identical=is_identical(" ".join(by_doc[c_doc][i].text for i in sorted(set(p.complex))),
                                           " ".join(by_doc[s_doc][i].text for i in sorted(set(p.simple)))),
                )
            )
            pair_specs.append((p, c_doc, s_doc))
    pairs = CandidatePair.objects.bulk_create(pair_rows, batch_size=BATCH)

    members: list[PairSentence] = []
    gold: list[Adjudication] = []
    for pair, (p, c_doc, s_doc) in zip(pairs, pair_specs):
        members.extend(PairSentence(pair_id=pair.pk, sentence_id=by_doc[c_doc][i].pk, side=Side.COMPLEX)
                       for i in sorted(set(p.complex)))
        members.extend(PairSentence(pair_id=pair.pk, sentence_id=by_doc[s_doc][i].pk, side=Side.SIMPLE)
                       for i in sorted(set(p.simple)))
        if p.gold:
            gold.append(Adjudication(pair_id=pair.pk, value=p.gold, provenance=Adjudication.IMPORTED, note=p.note))
    PairSentence.objects.bulk_create(members, batch_size=BATCH)
    Adjudication.objects.bulk_create(gold, batch_size=BATCH)
    return Written(
        articles=len(articles), documents=len(documents), sentences=len(sentence_rows), pairs=len(pairs),
        article_ids=[a.pk for a in articles],
    )
