"""Writing parsed articles to the database: bulk inserts, inside the caller's transaction.

What an input's gold links become depends on the import's gold meaning (:class:`GoldImport`):
``exhaustive`` and ``sparse`` links are adjudicated with provenance ``imported`` (a link without a
kind as :data:`~annotation.label_schemes.UNKNOWN_KIND`); ``predictions`` become the predictions of
an alignment run named after the file (no gold). The meaning is kept on every article of the import
(``meta["gold_import"]``: meaning, test_questions, and for exhaustive gold the complete document
pairs' levels), where ``review.exhaustive`` and the queue's test questions read it. An article the
input puts in a train/dev/test split (``ParsedArticle.split``) gets that split.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from annotation.label_schemes import UNKNOWN_KIND
from annotation.models import (
    Adjudication,
    Article,
    CandidatePair,
    Document,
    PairSentence,
    Paragraph,
    Prediction,
    Project,
    Sentence,
    Side,
    Split,
    indices_key,
)
from annotation.services.corpus.importing.base import ParsedArticle
from workers.engine import is_identical

BATCH = 1000


@dataclass(frozen=True)
class GoldImport:
    """What the input's gold links mean: ``meaning`` (exhaustive / sparse / predictions), whether
    they become hidden test questions, and (predictions) the run that holds them."""

    meaning: str = "sparse"
    test_questions: bool = False
    run_id: int | None = None

    def meaning_of(self, article: ParsedArticle) -> str:
        """The import's meaning, or the article's own (``ParsedArticle.gold_meaning``) unless predictions."""
        return article.gold_meaning if article.gold_meaning and self.meaning != "predictions" else self.meaning

    def stamp(self, article: ParsedArticle) -> dict:
        meaning = self.meaning_of(article)
        out: dict = {"meaning": meaning, "test_questions": self.test_questions and meaning != "predictions"}
        if meaning == "exhaustive":
            out["document_pairs"] = [list(levels) for levels in article.gold_documents]
        if self.run_id is not None:
            out["run"] = self.run_id
        return out


@dataclass
class Written:
    articles: int = 0
    documents: int = 0
    sentences: int = 0
    pairs: int = 0
    article_ids: list[int] = field(default_factory=list)
    # gold links by what they were stored as: aligned / partial / aligned-or-partial (Task 1 only) /
    # other scheme values, "predictions", and "complete" (articles counted complete), "tests"
    gold: Counter = field(default_factory=Counter)
    # the gold meaning each article got (the file's own where it states one): meaning → articles, links
    applied: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, other: Written) -> None:
        self.articles += other.articles
        self.documents += other.documents
        self.sentences += other.sentences
        self.pairs += other.pairs
        self.article_ids.extend(other.article_ids)
        self.gold.update(other.gold)
        for meaning, row in other.applied.items():
            mine = self.applied.setdefault(meaning, {"articles": 0, "links": 0})
            mine["articles"] += row["articles"]
            mine["links"] += row["links"]


def applied_meanings(parsed: list[ParsedArticle], gold: GoldImport) -> dict[str, dict[str, int]]:
    """How many articles and gold links each meaning was applied to, as ``review.exhaustive`` reads
    the stamps: ``exhaustive`` where the article's meaning is and it states its document pairs,
    ``sparse`` for the other articles with gold links; none for predictions or articles without gold."""
    out: dict[str, dict[str, int]] = {}
    if gold.run_id is not None:
        return out
    for a in parsed:
        links = sum(1 for p in a.pairs if p.gold)
        meaning = ("exhaustive" if a.gold_documents and gold.meaning_of(a) == "exhaustive"
                   else "sparse" if links else None)
        if meaning is not None:
            row = out.setdefault(meaning, {"articles": 0, "links": 0})
            row["articles"] += 1
            row["links"] += links
    return out


def _predicted(p) -> str:
    """The label a predicted link is stored with (a link of unknown kind: "aligned", as an aligner says)."""
    return p.label if p.label in ("aligned", "partial", "not") else ("aligned" if p.label == UNKNOWN_KIND else "")


def write_articles(project: Project, parsed: list[ParsedArticle], *, source: str = "", token: str = "",
                   gold: GoldImport | None = None) -> Written:
    """Insert ``parsed`` (already validated) with a handful of bulk queries per table. ``token``
    (the import's id) is kept as each article's ``meta["import"]``, ``gold`` (what gold links mean,
    default sparse) as ``meta["gold_import"]``."""
    gold = gold or GoldImport()
    articles = _create_articles(project, parsed, source=source, token=token, gold=gold)
    Split.objects.bulk_create([Split(article_id=article.pk, name=a.split, origin=Split.MANUAL)
                               for a, article in zip(parsed, articles) if a.split in Split.NAMES], batch_size=BATCH)
    documents, docs_by_level = _create_documents(parsed, articles)
    by_doc, n_sentences = _create_sentences(parsed, docs_by_level)
    pairs, pair_specs = _create_pairs(parsed, articles, docs_by_level, by_doc, gold)
    counts, adjudicated = _create_pair_members_and_labels(pairs, pair_specs, by_doc, gold)
    complete = sum(1 for a in parsed if a.gold_documents and gold.meaning_of(a) == "exhaustive")
    if complete:
        counts["complete"] += complete
    if gold.test_questions and gold.run_id is None:
        counts["tests"] += adjudicated
    return Written(
        articles=len(articles), documents=len(documents), sentences=n_sentences,
        pairs=len(pairs), article_ids=[a.pk for a in articles], gold=counts, applied=applied_meanings(parsed, gold),
    )


def _create_articles(project: Project, parsed: list[ParsedArticle], *, source: str, token: str,
                     gold: GoldImport) -> list[Article]:
    stamp = {"import": token} if token else {}
    return Article.objects.bulk_create(
        [
            Article(project=project, title=a.title, source=(source or a.file)[:200],
                    meta={"file": a.file, **a.meta, **stamp, "gold_import": gold.stamp(a)})
            for a in parsed
        ],
        batch_size=BATCH,
    )


def _create_documents(parsed: list[ParsedArticle], articles: list[Article]) -> tuple[list[Document], list[dict[str, int]]]:
    """The documents, and each article's document ids by level."""
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
    return documents, [{d.level: next(doc_iter).pk for d in a.documents} for a in parsed]


def _create_sentences(parsed: list[ParsedArticle],
                      docs_by_level: list[dict[str, int]]) -> tuple[dict[int, list[Sentence]], int]:
    """Paragraphs and sentences: each document's sentences (by document id) in order, and how many were written."""
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
    return by_doc, len(sentence_rows)


def _create_pairs(parsed: list[ParsedArticle], articles: list[Article], docs_by_level: list[dict[str, int]],
                  by_doc: dict[int, list[Sentence]], gold: GoldImport) -> tuple[list[CandidatePair], list[tuple]]:
    """The imported candidate pairs, and each one's ``(parsed pair, complex doc id, simple doc id)``."""
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
                    predicted_label=_predicted(p) if p.label and gold.run_id is not None else "",
                    identical=is_identical(" ".join(by_doc[c_doc][i].text for i in sorted(set(p.complex))),
                                           " ".join(by_doc[s_doc][i].text for i in sorted(set(p.simple)))),
                )
            )
            pair_specs.append((p, c_doc, s_doc))
    return CandidatePair.objects.bulk_create(pair_rows, batch_size=BATCH), pair_specs


def _create_pair_members_and_labels(pairs: list[CandidatePair], pair_specs: list[tuple],
                                    by_doc: dict[int, list[Sentence]], gold: GoldImport) -> tuple[Counter, int]:
    """Each pair's sentences, and its label: a prediction of the import's run (gold meaning
    "predictions") or imported gold. Returns the gold counts and how many pairs were adjudicated."""
    members: list[PairSentence] = []
    adjudications: list[Adjudication] = []
    predictions: list[Prediction] = []
    counts: Counter = Counter()
    for rank, (pair, (p, c_doc, s_doc)) in enumerate(zip(pairs, pair_specs)):
        members.extend(PairSentence(pair_id=pair.pk, sentence_id=by_doc[c_doc][i].pk, side=Side.COMPLEX)
                       for i in sorted(set(p.complex)))
        members.extend(PairSentence(pair_id=pair.pk, sentence_id=by_doc[s_doc][i].pk, side=Side.SIMPLE)
                       for i in sorted(set(p.simple)))
        if p.label and gold.run_id is not None:  # predictions: the run's, never gold
            predictions.append(Prediction(run_id=gold.run_id, pair_id=pair.pk, score=p.score, predicted_label=_predicted(p),
                                          features=dict(p.features), rank=rank))
            counts["predictions"] += 1
        elif p.gold:
            adjudications.append(Adjudication(pair_id=pair.pk, value=p.gold, provenance=Adjudication.IMPORTED,
                                              note=p.note))
            counts[p.gold] += 1
    PairSentence.objects.bulk_create(members, batch_size=BATCH)
    Adjudication.objects.bulk_create(adjudications, batch_size=BATCH)
    Prediction.objects.bulk_create(predictions, batch_size=BATCH)
    return counts, len(adjudications)
