"""A run's work list: which document pairs it aligns, in which order, cut into chunks.

Every run is a plan of :class:`~annotation.models.RunChunk` rows over the same list (the project's
articles by id, minus ``skip_articles``; per article its level pairs): a shared run in chunks of
about ``RUN_CHUNK_SENTENCES`` sentences (so chunks cost about the same), a run-level method in one
chunk (its first pass needs every document pair at once). :class:`Executor` is what a kind of run (an
aligner's, a mining run's) gives the one executor of :mod:`.run_chunks`."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import Count

from annotation.models import AlignmentRun, Article, Document, RunChunk, Sentence

WorkItem = tuple[Article, Document, Document]


def document_pairs(article: Article, level_pairs: list) -> list[tuple[Document, Document]]:
    """Which versions of an article to align: the given level pairs, or each adjacent pair of ranks."""
    docs = list(article.documents.order_by("rank"))
    if level_pairs:
        by_level = {d.level: d for d in docs}
        return [(by_level[c], by_level[s]) for c, s in level_pairs if c in by_level and s in by_level]
    return list(zip(docs, docs[1:]))


def work_of(run: AlignmentRun) -> list[list[int]]:
    """``[article, complex document, simple document]`` ids of every document pair the run aligns, in order."""
    skip = set(run.params.get("skip_articles") or ())
    return [[a.pk, c.pk, s.pk] for a in run.project.articles.order_by("id") if a.pk not in skip
            for c, s in document_pairs(a, run.level_pairs)]


def plan(run: AlignmentRun, *, shared: bool) -> list[RunChunk]:
    """The run's chunks, created from its work list if it has none yet: ``shared``, chunks of about
    ``RUN_CHUNK_SENTENCES`` sentences; else one chunk of every document pair. Deterministic: a
    concurrent planner creates the same rows, which the unique (run, index) keeps once."""
    chunks = list(run.chunks.order_by("index"))
    if chunks:
        return chunks
    work = work_of(run)
    counts = dict(Sentence.objects.filter(document_id__in={d for _, c, s in work for d in (c, s)})
                  .values("document_id").annotate(n=Count("id")).values_list("document_id", "n"))
    limit = settings.RUN_CHUNK_SENTENCES if shared else float("inf")
    rows: list[RunChunk] = []
    current: list[list[int]] = []
    size = 0
    for a, c, s in work:
        n = counts.get(c, 0) + counts.get(s, 0)
        if current and size + n > limit:
            rows.append(RunChunk(run=run, index=len(rows), work=current, sentences=size))
            current, size = [], 0
        current.append([a, c, s])
        size += n
    if current or not rows:  # a run with no document pairs is one empty chunk: it finishes like any other
        rows.append(RunChunk(run=run, index=len(rows), work=current, sentences=size))
    RunChunk.objects.bulk_create(rows, ignore_conflicts=True)
    return list(run.chunks.order_by("index"))


def load(chunk: RunChunk) -> list[WorkItem]:
    """The chunk's document pairs as rows (a document deleted since the plan is left out)."""
    articles = Article.objects.in_bulk({a for a, _, _ in chunk.work})
    documents = Document.objects.in_bulk({d for _, c, s in chunk.work for d in (c, s)})
    return [(articles[a], documents[c], documents[s]) for a, c, s in chunk.work
            if a in articles and c in documents and s in documents]


@dataclass(frozen=True)
class Planned:
    """A run's plan: its chunks, the number of items it works through (``articles_total``), and what
    the plan adds to the run's checkpoint."""

    chunks: list[RunChunk]
    articles: int
    checkpoint: dict = field(default_factory=dict)


def _always(_run: AlignmentRun, _index: int) -> bool:
    return True


def _nothing(_run: AlignmentRun, _chunk: RunChunk) -> list[int]:
    return []


def _all(_run: AlignmentRun, left: list[int]) -> list[int]:
    return left


def _runs_queue(run: AlignmentRun, _index: int) -> str:
    return run.queue


@dataclass(frozen=True)
class Executor:
    """What differs between kinds of run; claiming, heartbeats, cancel, retry, liveness and finishing
    are :mod:`.run_chunks`' for every run. An aligner's run and a mining run are each one of these.

    ``plan(run)`` creates the run's chunk rows (once: a second call returns the same); ``run(run, chunk)``
    does one chunk's work and returns its stats (``pairs`` written, ``seconds``); ``report(run_id)``
    writes the run's progress; ``result(run)`` the finished run's result and timings. A staged plan
    (mining) also says which unfinished chunks may start now (``due``, of those left in index order),
    whether one may (``ready``), which chunks a finished chunk made due (``then``), and each chunk's
    queue (``queue``)."""

    plan: Callable[[AlignmentRun], Planned]
    run: Callable[[AlignmentRun, RunChunk], dict]
    report: Callable[[int], None]
    result: Callable[[AlignmentRun], tuple[dict, dict]]
    due: Callable[[AlignmentRun, list[int]], list[int]] = _all
    ready: Callable[[AlignmentRun, int], bool] = _always
    then: Callable[[AlignmentRun, RunChunk], list[int]] = _nothing
    queue: Callable[[AlignmentRun, int], str] = _runs_queue
