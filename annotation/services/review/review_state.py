"""The dashboard's aggregates cached per state of what they read (issue 37: the dashboard at a million pairs).

The dashboard reads every counted label, completion and gold value of the project, its agreement
compares every pair of annotators, and each run's "new pairs" anti-joins its predictions with every
earlier run's: seconds at a million pairs, for numbers that change only when somebody labels,
adjudicates, completes an article, imports, aligns or changes the settings. :func:`cached` keeps each
aggregate in Django's cache under :func:`state`, a digest of cheap marks of all those writes:

* labels, gold (adjudications and their history), completions, articles: the table's row count, highest
  id and, where rows are changed in place, the latest change time
  (``Label.updated_at``, ``Adjudication.created_at``) — of the whole table: an index-only read, where the
  project's own rows would be a join over its million pairs (a write in another project only costs a
  recomputation here, never a stale figure); sentences and candidate pairs: the highest id (added by
  imports and runs, removed only with an article or a run, both marked);
* the project's settings (``config``: QC overlap, review mode, thresholds) and label scheme;
* its memberships (roles, exclusions) and its runs (status, progress, pair count, finish).

No writer has to remember to invalidate anything: a label given, edited or removed, an adjudication, a
completion (or its removal), an import, a run (or its deletion) or a settings change moves the state, so
the next reader computes afresh (``tests/annotation/services/review/test_review_state.py`` checks each).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django.core.cache import cache
from django.db.models import Count, Max

from annotation.digest import digest
from annotation.models import (
    Adjudication,
    AdjudicationChange,
    AlignmentRun,
    Article,
    ArticleCompletion,
    CandidatePair,
    Label,
    Membership,
    Project,
    Sentence,
)

T = TypeVar("T")
TTL_S = 3600
"""How long an aggregate is kept (a newer state replaces it sooner: its key changes)."""

_TABLES = (  # (model, the time its rows change with in place, or None)
    (Label, "updated_at"),
    (Adjudication, "created_at"),
    (AdjudicationChange, None),
    (ArticleCompletion, None),
    (Article, None),
)


def table_marks() -> list[object]:
    """The cheap marks of the labels, gold, completions, articles, pairs and sentences (module docstring):
    index-only aggregates over whole tables, shared with the training set's state
    (:func:`annotation.services.training.current.data_state`)."""
    parts: list[object] = []
    for model, changed in _TABLES:
        marks = {"n": Count("pk"), "last": Max("pk"), **({"changed": Max(changed)} if changed else {})}
        parts.append(model.objects.order_by().aggregate(**marks))
    # pairs are added by imports and runs and removed with runs or articles (both marked here): the highest
    # id is an index read, where a count would scan a million rows
    parts.append(CandidatePair.objects.order_by().aggregate(last=Max("pk")))
    parts.append(Sentence.objects.order_by().aggregate(last=Max("pk")))  # added by imports, removed with articles
    return parts


def state(project: Project) -> str:
    """A digest of the marks (module docstring) of everything the dashboard reads."""
    project = Project.objects.only("config", "label_scheme_id").get(pk=project.pk)
    parts: list[object] = [project.pk, project.config, project.label_scheme_id, *table_marks()]
    parts.append(list(Membership.objects.filter(project=project).order_by("pk")
                      .values_list("user_id", "role", "excluded_at")))
    parts.append(list(AlignmentRun.objects.filter(project=project).order_by("pk")
                      .values_list("pk", "status", "progress", "pair_count", "finished_at", "message", "error")))
    return digest(parts)


def cached(project: Project, name: str, compute: Callable[[], T], *, current: str | None = None) -> T:
    """``compute()`` of ``project`` under the ``name``d aggregate, computed once per :func:`state`
    (``current``: the state when the caller already has it, for several aggregates of one request)."""
    key = f"review:{project.pk}:{name}:{current or state(project)}"
    found = cache.get(key)
    if found is not None:
        return found
    value = compute()
    cache.set(key, value, TTL_S)
    return value
