"""How many pairs the one gold reading gives each value, kept per article (issue 37: the dashboard at a million pairs).

The dashboard's ``labels`` figure counts the gold value of every pair with evidence
(:func:`annotation.services.review.gold_reading.pair_values`, ties as ``undecided``): 3.3 of its seconds at a million
pairs, read again after every label. Yet an article's count changes only when its evidence does, as the export
preview's per-article parts rely on (``export/preview_parts.py``). So :func:`value_counts` keeps each article's counts
under its evidence marks (:func:`annotation.services.review.gold_marks.evidence_marks`) and the project-wide marks
every article's gold depends on (:func:`project_key`: settings, label scheme, memberships, imports), in one
``KeptAggregate`` row, and reads through the gold reading only the articles whose marks moved. It decides no gold:
the values are the reading's (``tests/annotation/services/review/test_gold_counts.py`` checks the sum equals a fresh
reading after every kind of change).
"""
from __future__ import annotations

from collections import Counter

from django.db.models import Count, Max
from django.utils import timezone

from annotation.digest import digest
from annotation.models import Article, CandidatePair, KeptAggregate, LabelScheme, Membership, Project, Sentence
from annotation.services.review import gold_marks, gold_reading

NAME = "gold-value-counts"
VERSION = 1
"""Bumped when what a part holds changes (every kept part is then stale)."""


def project_key(project: Project) -> str:
    """A digest of the project-wide marks every article's gold depends on: the settings (QC, review mode) and the
    label scheme (its values too), the memberships (an exclusion changes whose votes count), the highest pair and
    sentence ids and the articles (imports)."""
    project = Project.objects.only("config", "label_scheme_id").get(pk=project.pk)
    parts: list[object] = [VERSION, project.pk, project.config, project.label_scheme_id]
    parts.append(list(LabelScheme.objects.filter(pk=project.label_scheme_id).values_list("kind", "values", "dimensions")))
    parts.append(list(Membership.objects.filter(project=project).order_by("pk").values_list("user_id", "role", "excluded_at")))
    parts += [m.objects.order_by().aggregate(last=Max("pk")) for m in (CandidatePair, Sentence)]
    parts.append(Article.objects.order_by().aggregate(n=Count("pk"), last=Max("pk")))
    return digest(parts)


def per_article(project: Project, articles: list[int]) -> dict[int, dict[str, int]]:
    """``{article: {gold value: pairs}}`` of ``articles`` as the gold reading gives them (ties as ``undecided``)."""
    out: dict[int, Counter] = {a: Counter() for a in articles}
    for found in gold_reading.read_chunks(project, articles=articles):
        for doc in found.values():
            out.setdefault(doc.article_id, Counter()).update(g.value for g in doc.pairs.values())
    return {a: dict(c) for a, c in out.items()}


def value_counts(project: Project) -> dict[str, int]:
    """``{gold value: pairs}`` over the project (equal to counting
    :func:`~annotation.services.review.gold_reading.pair_values` with ``ties=True``), the articles whose evidence
    did not change read back from the kept row (module docstring)."""
    key = project_key(project)
    marks = {a: digest(found) for a, found in gold_marks.evidence_marks(project).items()}
    row = KeptAggregate.objects.filter(project_id=project.pk, name=NAME).first()
    kept = row.value.get("parts", {}) if row is not None and row.state == key else {}
    parts = {int(a): counts for a, (mark, counts) in kept.items() if int(a) in marks and marks[int(a)] == mark}
    stale = sorted(a for a in marks if a not in parts)
    if stale or row is None or len(kept) != len(parts):
        parts.update(per_article(project, stale))
        KeptAggregate.objects.update_or_create(project_id=project.pk, name=NAME, defaults={
            "state": key, "computed_at": timezone.now(), "seconds": 0.0,
            "value": {"parts": {str(a): [marks[a], counts] for a, counts in parts.items()}, "read": len(stale)}})
    total: Counter = Counter()
    for counts in parts.values():
        total.update(counts)
    return dict(total)


__all__ = ["per_article", "project_key", "value_counts"]
