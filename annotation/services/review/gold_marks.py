"""Marks of the evidence the gold reading (:mod:`annotation.services.review.gold_reading`) reads, per
article: what tells a consumer that keeps a per-article result of the reading (the export preview's parts,
issue 37) which articles' results are stale. It decides no gold; it lives beside the reading (and is
listed with it in ``tests/test_repository_gold.py``) because it queries the same evidence tables.
"""
from __future__ import annotations

from collections import defaultdict

from django.db.models import Count, Max, Q

from annotation.models import Adjudication, ArticleCompletion, Label, Project
from annotation.services.review.exhaustive import imported_exhaustive


def evidence_marks(project: Project) -> dict[int, list]:
    """``{article: marks}`` of every article of the project with evidence (module docstring: a label,
    stored gold, a completion, imported exhaustive gold): per article, its labels' count, highest id,
    latest edit and test questions, its gold's count, highest id and latest change, its completions'
    count and highest id, and whether its imported gold is exhaustive — grouped aggregates, no pair read.
    What :func:`~annotation.services.review.gold_reading.read` gives an article changes only when its marks
    do (or the project's: memberships, settings, pairs), so a consumer may keep a per-article result under
    them (the export preview's parts, issue 37)."""
    marks: dict[int, list] = defaultdict(list)
    labels = (Label.objects.filter(pair__article__project=project).order_by().values("pair__article_id")
              .annotate(n=Count("pk"), last=Max("pk"), changed=Max("updated_at"),
                        tests=Count("pk", filter=Q(is_test_question=True)))
              .values_list("pair__article_id", "n", "last", "changed", "tests"))
    stored = (Adjudication.objects.filter(pair__article__project=project).order_by().values("pair__article_id")
              .annotate(n=Count("pk"), last=Max("pk"), changed=Max("created_at"))
              .values_list("pair__article_id", "n", "last", "changed"))
    completions = (ArticleCompletion.objects.filter(article__project=project).order_by().values("article_id")
                   .annotate(n=Count("pk"), last=Max("pk")).values_list("article_id", "n", "last"))
    for name, rows in (("labels", labels), ("gold", stored), ("completions", completions)):
        for article, *found in rows:
            marks[article].append([name, *(str(v) if not isinstance(v, int) else v for v in found)])
    for article, *_ in sorted(imported_exhaustive(project)):
        marks[article].append(["exhaustive"])
    return dict(marks)


__all__ = ["evidence_marks"]
