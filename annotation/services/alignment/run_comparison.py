"""What changed between two runs: the sentence pairs one run links and the other does not, and the
pairs both link with a different label.

A run *links* a pair when its prediction's label is one of :data:`LINK_LABELS` (aligned, partial);
a prediction with another label (e.g. ``not-aligned``) or none is not a link. Because sentence pairs
are project-level, the comparison is a join on the pair: no text matching, any two runs of a project
(two model versions, two methods) compare alike. Used by the model registry (re-align with a new
version → review what changed) and by the run pages.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from django.db.models import F, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from annotation.models import AlignmentRun, Article, CandidatePair, Prediction

LINK_LABELS: tuple[str, ...] = ("aligned", "partial")
KINDS: tuple[str, ...] = ("added", "removed", "label_changed")
#: Changed pairs one answer lists (:func:`changes_page`; ``offset`` pages through the rest), and
#: articles the summary's per-article table lists (``per_article_total`` counts them all): two runs
#: over a big project differ in millions of pairs.
CHANGES_PAGE = 500
ARTICLES_SHOWN = 500


class ComparisonError(ValueError):
    pass


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


def _links(run: AlignmentRun) -> dict[int, tuple[int, str, float | None]]:
    rows = (Prediction.objects.filter(run=run, predicted_label__in=LINK_LABELS)
            .values_list("pair_id", "pair__article_id", "predicted_label", "score"))
    return {pair: (article, label, score) for pair, article, label, score in rows}


def _check(old: AlignmentRun, new: AlignmentRun) -> None:
    if old.project_id != new.project_id:
        raise ComparisonError("the two runs belong to different projects")
    if old.pk == new.pk:
        raise ComparisonError("choose two different runs")


def changes(old: AlignmentRun, new: AlignmentRun) -> list[Change]:
    """Every difference between the two runs' links, by article then pair."""
    _check(old, new)
    before, after = _links(old), _links(new)
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


def _kappa(both: int, only_old: int, only_new: int, neither: int) -> float | None:
    """Cohen's kappa of the two runs' link decisions over the pairs either proposed."""
    n = both + only_old + only_new + neither
    if n == 0:
        return None
    observed = (both + neither) / n
    p_old, p_new = (both + only_old) / n, (both + only_new) / n
    expected = p_old * p_new + (1 - p_old) * (1 - p_new)
    return None if expected == 1 else round((observed - expected) / (1 - expected), 4)


def summary(old: AlignmentRun, new: AlignmentRun, *, articles: int = ARTICLES_SHOWN) -> dict:
    """Counts by kind and per article (the first ``articles`` articles by id), the links both share,
    and how much the runs agree."""
    found = changes(old, new)
    before, after = _links(old), _links(new)
    both = len(set(before) & set(after))
    proposed = set(Prediction.objects.filter(run__in=[old, new]).values_list("pair_id", flat=True))
    neither = len(proposed - set(before) - set(after))
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
                      "kappa": _kappa(both, len(set(before) - set(after)), len(set(after) - set(before)), neither)},
    }


def changes_page(old: AlignmentRun, new: AlignmentRun, *, offset: int = 0, limit: int = CHANGES_PAGE) -> dict:
    """``limit`` (at most :data:`CHANGES_PAGE`) of :func:`changes` from ``offset``, each with its
    article's title: ``{"changes", "changes_total", "changes_offset", "changes_next_offset"}``
    (``changes_next_offset`` is None on the last page).

    Raises:
        ComparisonError: a negative offset, or runs that cannot be compared.
    """
    if offset < 0:
        raise ComparisonError("offset must be 0 or more")
    limit = max(1, min(limit, CHANGES_PAGE))
    found = changes(old, new)
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
