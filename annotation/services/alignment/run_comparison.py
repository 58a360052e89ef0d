"""What changed between two runs: the sentence pairs one run links and the other does not, and the
pairs both link with a different label.

A run *links* a pair when its prediction's label is one of :data:`LINK_LABELS` (aligned, partial);
a prediction with another label (e.g. ``not-aligned``) or none is not a link. Because sentence pairs
are project-level, the comparison is a join on the pair: no text matching, any two runs of a project
(two model versions, two methods) compare alike. Used by the model registry (re-align with a new
version → review what changed) and by the run pages. Their agreement (:func:`agreement`) is Cohen's κ
over every sentence pair of the document pairs both runs aligned, not-aligned pairs included: over
the links alone, two runs that share nearly all of them would agree "less than chance".
"""
from __future__ import annotations

import time
from collections import Counter, defaultdict
from dataclasses import dataclass

from django.db import IntegrityError, connection, transaction
from django.db.models import Count, F, Max, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from annotation.digest import digest
from annotation.errors import DomainError
from annotation.models import (
    AlignmentRun,
    Article,
    CandidatePair,
    Prediction,
    RunChunk,
    RunComparison,
    Sentence,
    Status,
    key_indices,
)

LINK_LABELS: tuple[str, ...] = ("aligned", "partial")
NOT_LINKED = "not-aligned"
#: What the agreement is computed over, as the compare page says it.
KAPPA_OVER = ("Cohen's κ of the two runs' labels (aligned, partial, not aligned) over every sentence pair (each complex "
              "× each simple sentence) of the document pairs both runs aligned; a pair a run does not link is not "
              "aligned for it")
KINDS: tuple[str, ...] = ("added", "removed", "label_changed")
#: Changed pairs one answer lists (:func:`changes_page`; ``offset`` pages through the rest), and
#: articles the summary's per-article table lists (``per_article_total`` counts them all): two runs
#: over a big project differ in millions of pairs.
CHANGES_PAGE = 500
ARTICLES_SHOWN = 500
#: Run states after which a run's predictions no longer change: a comparison of two such runs is cached.
FINISHED = (Status.SUCCEEDED, Status.FAILED, Status.CANCELLED)
DocKey = tuple[int, int]


class ComparisonError(DomainError, ValueError):
    """Two runs that cannot be compared, or a bad page of the changes."""

    code = "bad_comparison"


@dataclass(frozen=True)
class Change:
    pair_id: int
    article_id: int
    kind: str  # added | removed | label_changed
    old_label: str  # "" when the old run did not link the pair
    new_label: str
    old_score: float | None
    new_score: float | None

    def as_dict(self) -> dict:
        return {"pair": self.pair_id, "article": self.article_id, "kind": self.kind,
                "old": {"label": self.old_label, "score": self.old_score},
                "new": {"label": self.new_label, "score": self.new_score}}


def _links(run: AlignmentRun) -> dict[int, tuple]:
    """``{pair: (article, label, score, complex doc, simple doc, complex key, simple key)}`` of the run's
    links: one reading serves the changes and the agreement (issue 37: a million predictions a run)."""
    rows = (Prediction.objects.filter(run=run, predicted_label__in=LINK_LABELS)
            .values_list("pair_id", "pair__article_id", "predicted_label", "score", "pair__complex_document_id",
                         "pair__simple_document_id", "pair__complex_key", "pair__simple_key"))
    return {row[0]: row[1:] for row in rows}


def check(old: AlignmentRun, new: AlignmentRun) -> None:
    if old.project_id != new.project_id:
        raise ComparisonError("the two runs belong to different projects")
    if old.pk == new.pk:
        raise ComparisonError("choose two different runs")


def changes(old: AlignmentRun, new: AlignmentRun, *, links: tuple[dict, dict] | None = None) -> list[Change]:
    """Every difference between the two runs' links, by article then pair (``links``: both runs'
    :func:`_links` when the caller has read them already)."""
    check(old, new)
    before, after = links or (_links(old), _links(new))
    out = []
    for pair in sorted(set(before) | set(after)):
        b, a = before.get(pair), after.get(pair)
        if b is None:
            kind = "added"
        elif a is None:
            kind = "removed"
        elif b[1] != a[1]:
            kind = "label_changed"
        else:
            continue
        article = (a or b)[0]
        out.append(Change(pair, article, kind, b[1] if b else "", a[1] if a else "", b[2] if b else None,
                          a[2] if a else None))
    return sorted(out, key=lambda c: (c.article_id, c.pair_id))


def _document_pairs(run: AlignmentRun) -> set[tuple[int, int]]:
    """The (complex, simple) document pairs the run aligned: those of its finished chunks, and any
    where it linked a pair (runs without chunks: mining, run-level methods, older runs)."""
    found = set(Prediction.objects.filter(run=run).values_list("pair__complex_document_id", "pair__simple_document_id")
                .distinct())
    for work in RunChunk.objects.filter(run=run, status=Status.SUCCEEDED).values_list("work", flat=True):
        found.update((int(c), int(s)) for _, c, s in work)
    return found


def _sentence_labels(run: AlignmentRun, scope: set[tuple[int, int]],
                     links: dict[int, tuple] | None = None) -> dict[tuple[int, int, int, int], str]:
    """``{(complex doc, simple doc, complex sentence, simple sentence): label}`` of the run's links in
    ``scope``, one per sentence pair (a split or fusion links each of its sentence pairs; aligned
    wins over partial where two links cover one sentence pair); ``links``: the run's :func:`_links`."""
    out: dict[tuple[int, int, int, int], str] = {}
    links = _links(run) if links is None else links
    for _, label, _, c_doc, s_doc, c_key, s_key in links.values():
        if (c_doc, s_doc) not in scope:
            continue
        for c in key_indices(c_key):
            for s in key_indices(s_key):
                key = (c_doc, s_doc, c, s)
                out[key] = "aligned" if "aligned" in (label, out.get(key)) else label
    return out


def cohen_kappa_from_table(table: dict[tuple[str, str], int]) -> float | None:
    """Cohen's κ of a confusion table ``{(label a, label b): items}``; None without items or when
    chance agreement is already perfect (one label for everything).

        >>> cohen_kappa_from_table({("x", "x"): 2, ("y", "y"): 1, ("x", "y"): 1})
        0.5
    """
    n = sum(table.values())
    if n == 0:
        return None
    labels = {a for a, _ in table} | {b for _, b in table}
    observed = sum(table.get((k, k), 0) for k in labels) / n
    expected = sum(sum(v for (a, _), v in table.items() if a == k) * sum(v for (_, b), v in table.items() if b == k)
                   for k in labels) / n ** 2
    return None if expected == 1 else round((observed - expected) / (1 - expected), 4)


def agreement(old: AlignmentRun, new: AlignmentRun, *, links: tuple[dict, dict] | None = None) -> dict:
    """Cohen's κ of the two runs' labels (aligned, partial, not aligned) over every sentence pair —
    each complex sentence × each simple sentence — of the document pairs *both* runs aligned; a
    sentence pair a run does not link is "not aligned" for that run. Document pairs only one run
    aligned are left out (counted in ``document_pairs_left_out``). ``links``: both runs' :func:`_links`
    when the caller has read them."""
    old_pairs, new_pairs = _document_pairs(old), _document_pairs(new)
    scope = old_pairs & new_pairs
    sizes = dict(Sentence.objects.filter(document_id__in={d for pair in scope for d in pair})
                 .values("document_id").annotate(n=Count("id")).values_list("document_id", "n"))
    total = sum(sizes.get(c, 0) * sizes.get(s, 0) for c, s in scope)
    a, b = (_sentence_labels(run, scope, None if links is None else links[i]) for i, run in enumerate((old, new)))
    table = Counter((a.get(k, NOT_LINKED), b.get(k, NOT_LINKED)) for k in set(a) | set(b))
    table[(NOT_LINKED, NOT_LINKED)] += total - sum(table.values())
    agreeing = sum(v for (x, y), v in table.items() if x == y)
    return {"kappa": cohen_kappa_from_table(table), "sentence_pairs": total, "document_pairs": len(scope),
            "document_pairs_left_out": len(old_pairs ^ new_pairs), "observed": round(agreeing / total, 4) if total else None,
            "over": KAPPA_OVER}


def summary(old: AlignmentRun, new: AlignmentRun, *, articles: int = ARTICLES_SHOWN,
            read: tuple[tuple[dict, dict], list[Change]] | None = None) -> dict:
    """Counts by kind and per article (the first ``articles`` articles by id), the links both share,
    and how much the runs agree (:func:`agreement`). ``read``: both runs' links and their changes, when
    the caller has them (:func:`compare` reads each once)."""
    (before, after), found = read or _read(old, new)
    both = len(set(before) & set(after))
    per_article: dict[int, Counter] = defaultdict(Counter)
    for c in found:
        per_article[c.article_id][c.kind] += 1
    shown = sorted(per_article)[:articles]
    titles = dict(Article.objects.filter(pk__in=shown).values_list("pk", "title"))
    return {
        "old": {"id": old.pk, "method": old.method, "links": len(before)},
        "new": {"id": new.pk, "method": new.method, "links": len(after)},
        "counts": {kind: sum(1 for c in found if c.kind == kind) for kind in KINDS} | {"unchanged": both - sum(
            1 for c in found if c.kind == "label_changed")},
        "per_article": [{"article": a, "title": titles.get(a, ""), **{k: per_article[a][k] for k in KINDS}} for a in shown],
        "per_article_total": len(per_article),
        "agreement": {"both": both, "only_old": len(set(before) - set(after)), "only_new": len(set(after) - set(before)),
                      **agreement(old, new, links=(before, after))},
    }


def _read(old: AlignmentRun, new: AlignmentRun) -> tuple[tuple[dict, dict], list[Change]]:
    links = (_links(old), _links(new))
    return links, changes(old, new, links=links)


def compare(old: AlignmentRun, new: AlignmentRun, *, pairs: bool = False, offset: int = 0,
            limit: int = CHANGES_PAGE) -> dict:
    """:func:`summary` and, with ``pairs``, :func:`changes_page` — the same answer, computed in SQL
    (:func:`_counted`: one join of the two runs' predictions on the pair, grouped by article, document
    pair and the two labels; only the page's articles' pairs are read row by row). Two finished runs'
    comparison is stored (:class:`~annotation.models.RunComparison`, keyed by :func:`finished_state`):
    issue 37, at a million predictions a run the SQL takes seconds, a stored answer milliseconds, and it
    survives a restart. A running run is compared afresh."""
    check(old, new)
    if offset < 0:
        raise ComparisonError("offset must be 0 or more")
    marks = finished_state(old, new)
    stored = None if marks is None else RunComparison.objects.filter(old=old, new=new, state=marks).first()
    if stored is None:
        started = time.monotonic()
        found, articles = _counted(old, new)
        if marks is not None:
            _keep(old, new, marks, found, articles, round(time.monotonic() - started, 3))
    else:
        found, articles = stored.summary, stored.articles
    out = dict(found)
    if pairs:
        out.update(_changes_page(old, new, articles, offset=offset, limit=limit))
    return out


def _keep(old: AlignmentRun, new: AlignmentRun, marks: str, found: dict, articles: list, seconds: float) -> None:
    """Store the comparison (a request computing it at the same moment may store it first: the same answer)."""
    try:
        with transaction.atomic():
            RunComparison.objects.update_or_create(old=old, new=new, defaults={
                "state": marks, "summary": found, "articles": articles, "seconds": seconds})
    except IntegrityError:
        pass


def _compare(old: AlignmentRun, new: AlignmentRun, *, pairs: bool, offset: int, limit: int) -> dict:
    """The comparison read in Python from both runs' links (:func:`summary`, :func:`changes_page`): the
    reference :func:`compare`'s SQL equals (``test_run_comparison.py``)."""
    read = _read(old, new)
    out = summary(old, new, read=read)
    if pairs:
        out.update(changes_page(old, new, offset=offset, limit=limit, found=read[1]))
    return out


def _link(label: str | None) -> str | None:
    """A prediction's label as the comparison reads it: a link's label, "" for another, None for none."""
    return None if label is None else label if label in LINK_LABELS else ""


_COUNTED = """
SELECT cp.article_id, cp.complex_document_id, cp.simple_document_id,
       (cp.complex_key LIKE '%%,%%' OR cp.simple_key LIKE '%%,%%' OR cp.complex_key = '' OR cp.simple_key = ''),
       o.predicted_label, n.predicted_label, COUNT(*)
FROM (SELECT pair_id, predicted_label FROM annotation_prediction WHERE run_id = %s) o
FULL JOIN (SELECT pair_id, predicted_label FROM annotation_prediction WHERE run_id = %s) n ON n.pair_id = o.pair_id
JOIN annotation_candidatepair cp ON cp.id = COALESCE(o.pair_id, n.pair_id)
GROUP BY 1, 2, 3, 4, 5, 6
"""
"""Both runs' predictions joined on the pair (every prediction: a document pair either run predicted in
was aligned by it), grouped by article, document pair, whether the pair is other than 1:1 and the two
labels (None: no prediction)."""


def _counted(old: AlignmentRun, new: AlignmentRun) -> tuple[dict, list[list[int]]]:
    """The summary (as :func:`summary` answers it) and ``[[article, added, removed, label changed], ...]``
    of every article with a change, from :data:`_COUNTED`'s rows (a few per document pair, not one per
    prediction). The agreement's cells: a 1:1 pair is its one cell; a document pair where either run
    links a pair other than 1:1 (a split, a fusion: cells shared by several links) is expanded in Python
    as :func:`agreement` does it, from those document pairs' links only."""
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL work_mem = '64MB'")  # the join's hash tables stay in memory
        cursor.execute(_COUNTED, [old.pk, new.pk])
        rows = cursor.fetchall()
    counts = Counter()
    per_article: dict[int, Counter] = defaultdict(Counter)
    aligned: tuple[set, set] = (set(), set())
    cells: dict[DocKey, Counter] = defaultdict(Counter)
    wide: set[DocKey] = set()
    for article, c, s, special, o, n, k in rows:
        o, n = _link(o), _link(n)
        doc = (c, s)
        if o is not None:
            aligned[0].add(doc)
        if n is not None:
            aligned[1].add(doc)
        counts["old"] += k if o else 0
        counts["new"] += k if n else 0
        if o and n:
            counts["both"] += k
        kind = "added" if n and not o else "removed" if o and not n else "label_changed" if o and n and o != n else None
        if kind:
            counts[kind] += k
            per_article[article][kind] += k
        if o or n:
            if special:
                wide.add(doc)
            else:
                cells[doc][(o or NOT_LINKED, n or NOT_LINKED)] += k
    table = _agreement_table(old, new, aligned, cells, wide)  # adds the runs' finished chunks to ``aligned``
    return _summary(old, new, counts, per_article, aligned, table)


def _agreement_table(old: AlignmentRun, new: AlignmentRun, aligned: tuple[set, set], cells: dict[DocKey, Counter],
                     wide: set[DocKey]) -> Counter:
    """The confusion table of the linked cells of the document pairs both runs aligned (their finished
    chunks' too): the 1:1 pairs' counts as grouped, the document pairs with wider links expanded."""
    for i, run in enumerate((old, new)):
        for work in RunChunk.objects.filter(run=run, status=Status.SUCCEEDED).values_list("work", flat=True):
            aligned[i].update((int(c), int(s)) for _, c, s in work)
    scope = aligned[0] & aligned[1]
    table: Counter = Counter()
    for doc, found in cells.items():
        if doc in scope and doc not in wide:
            table.update(found)
    table.update(_wide_cells(old, new, wide & scope))
    return table


def _summary(old: AlignmentRun, new: AlignmentRun, counts: Counter, per_article: dict[int, Counter],
             aligned: tuple[set, set], table: Counter) -> tuple[dict, list[list[int]]]:
    scope = aligned[0] & aligned[1]
    sizes = dict(Sentence.objects.filter(document__article__project_id=old.project_id).order_by()
                 .values("document_id").annotate(n=Count("id")).values_list("document_id", "n"))
    total = sum(sizes.get(c, 0) * sizes.get(s, 0) for c, s in scope)
    table[(NOT_LINKED, NOT_LINKED)] += total - sum(table.values())
    agreeing = sum(v for (x, y), v in table.items() if x == y)
    ordered = sorted(per_article)
    titles = dict(Article.objects.filter(pk__in=ordered[:ARTICLES_SHOWN]).values_list("pk", "title"))
    found = {
        "old": {"id": old.pk, "method": old.method, "links": counts["old"]},
        "new": {"id": new.pk, "method": new.method, "links": counts["new"]},
        "counts": {kind: counts[kind] for kind in KINDS} | {"unchanged": counts["both"] - counts["label_changed"]},
        "per_article": [{"article": a, "title": titles.get(a, ""), **{k: per_article[a][k] for k in KINDS}}
                        for a in ordered[:ARTICLES_SHOWN]],
        "per_article_total": len(per_article),
        "agreement": {"both": counts["both"], "only_old": counts["old"] - counts["both"],
                      "only_new": counts["new"] - counts["both"], "kappa": cohen_kappa_from_table(table),
                      "sentence_pairs": total, "document_pairs": len(scope),
                      "document_pairs_left_out": len(aligned[0] ^ aligned[1]),
                      "observed": round(agreeing / total, 4) if total else None, "over": KAPPA_OVER},
    }
    return found, [[a, *(per_article[a][k] for k in KINDS)] for a in ordered]


def _wide_cells(old: AlignmentRun, new: AlignmentRun, docs: set[DocKey]) -> Counter:
    """The confusion table of the cells of ``docs`` (document pairs where a run links a pair other than
    1:1), from those document pairs' links of both runs (:func:`_sentence_labels`)."""
    if not docs:
        return Counter()
    links: tuple[dict, dict] = ({}, {})
    rows = (Prediction.objects.filter(run_id__in=(old.pk, new.pk), predicted_label__in=LINK_LABELS,
                                      pair__complex_document_id__in={c for c, _ in docs})
            .values_list("run_id", "pair_id", "pair__article_id", "predicted_label", "score", "pair__complex_document_id",
                         "pair__simple_document_id", "pair__complex_key", "pair__simple_key"))
    for run_id, pair_id, *rest in rows:
        if (rest[3], rest[4]) in docs:
            links[0 if run_id == old.pk else 1][pair_id] = tuple(rest)
    a, b = (_sentence_labels(run, docs, links[i]) for i, run in enumerate((old, new)))
    return Counter((a.get(k, NOT_LINKED), b.get(k, NOT_LINKED)) for k in set(a) | set(b))


def _changes_page(old: AlignmentRun, new: AlignmentRun, articles: list[list[int]], *, offset: int, limit: int) -> dict:
    """:func:`changes_page` from the per-article counts :func:`_counted` stored: only the articles the
    page covers are read, their pairs with both runs' predictions (an index read, whatever the runs' size)."""
    limit = max(1, min(limit, CHANGES_PAGE))
    total = sum(sum(row[1:]) for row in articles)
    wanted, skip, seen = [], 0, 0
    for article, *kinds in articles:
        n = sum(kinds)
        if seen + n > offset and seen < offset + limit:
            if not wanted:
                skip = offset - seen
            wanted.append(article)
        seen += n
        if seen >= offset + limit:
            break
    found: list[Change] = []
    if wanted:
        links: tuple[dict, dict] = ({}, {})
        for run_id, pair_id, article, label, score in (
                Prediction.objects.filter(run_id__in=(old.pk, new.pk), pair__article_id__in=wanted,
                                          predicted_label__in=LINK_LABELS)
                .values_list("run_id", "pair_id", "pair__article_id", "predicted_label", "score")):
            links[0 if run_id == old.pk else 1][pair_id] = (article, label, score)
        found = changes(old, new, links=links)[skip:skip + limit]
    titles = dict(Article.objects.filter(pk__in={c.article_id for c in found}).values_list("pk", "title"))
    end = offset + len(found)
    return {"changes": [{**c.as_dict(), "title": titles.get(c.article_id, "")} for c in found],
            "changes_total": total, "changes_offset": offset, "changes_next_offset": end if end < total else None}


def finished_state(old: AlignmentRun, new: AlignmentRun) -> str | None:
    """A digest of cheap marks of what :func:`compare` reads when both runs have finished (None while
    either runs: its predictions still change). Issue 37: comparing two runs of a million predictions
    each takes seconds, and finished runs do not change, so :func:`compare` keeps its answer under
    this digest — no writer invalidates anything: the marks move with whatever could change the answer.

    * both runs' rows (status, progress, pair count, finish, project): a retry or a re-run moves them;
    * predictions and candidate pairs: the highest id (an index read) — rows are added by runs and
      imports; removed only with their run or article;
    * articles (and their titles, which the answer shows): row count and highest id, a deletion or an
      import moves them; a title edit in place does not (titles are set on import).
    """
    runs = list(AlignmentRun.objects.filter(pk__in=(old.pk, new.pk)).order_by("pk")
                .values_list("pk", "project_id", "status", "progress", "pair_count", "finished_at"))
    if len(runs) != 2 or any(row[2] not in FINISHED for row in runs):
        return None
    parts: list[object] = [runs, Prediction.objects.order_by().aggregate(last=Max("pk")),
                           CandidatePair.objects.order_by().aggregate(last=Max("pk")),
                           Article.objects.order_by().aggregate(n=Count("pk"), last=Max("pk"))]
    return digest(parts)


def changes_page(old: AlignmentRun, new: AlignmentRun, *, offset: int = 0, limit: int = CHANGES_PAGE,
                 found: list[Change] | None = None) -> dict:
    """``limit`` (at most :data:`CHANGES_PAGE`) of :func:`changes` from ``offset``, each with its
    article's title: ``{"changes", "changes_total", "changes_offset", "changes_next_offset"}``
    (``changes_next_offset`` is None on the last page).

    Raises:
        ComparisonError: a negative offset, or runs that cannot be compared.
    """
    if offset < 0:
        raise ComparisonError("offset must be 0 or more")
    limit = max(1, min(limit, CHANGES_PAGE))
    found = changes(old, new) if found is None else found
    page = found[offset:offset + limit]
    titles = dict(Article.objects.filter(pk__in={c.article_id for c in page}).values_list("pk", "title"))
    end = offset + len(page)
    return {"changes": [{**c.as_dict(), "title": titles.get(c.article_id, "")} for c in page],
            "changes_total": len(found), "changes_offset": offset,
            "changes_next_offset": end if end < len(found) else None}


def only_changed(pairs: QuerySet[CandidatePair], old_run: int, new_run: int) -> QuerySet[CandidatePair]:
    """``pairs`` narrowed to those whose link differs between the two runs, in SQL (the review queue
    of "what changed" uses it on every serve, whatever the project's size)."""
    def link(run: int):
        return Coalesce(Subquery(Prediction.objects.filter(pair=OuterRef("pk"), run_id=run, predicted_label__in=LINK_LABELS)
                                 .values("predicted_label")[:1]), Value(""))

    return pairs.annotate(old_link=link(old_run), new_link=link(new_run)).exclude(old_link=F("new_link"))
