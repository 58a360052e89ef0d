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

Django's cache is empty in a freshly started web process (and per process with the local-memory cache), so
the figures a page needs most (the dashboard's, a run's scores) are also kept in the database by :func:`kept`
(``KeptAggregate``: one row per name, with the state it was computed at): the first view after a restart reads
the row when the state has not moved. When it has, a big project's page (:data:`LAZY_ARTICLES` articles or
more) shows the row "as of <its time>, updating" (:class:`Kept` with ``current=False``) and starts the
caller's background job to compute the new one, instead of computing seconds of figures while it answers; a
small project's, and every reader that needs the figures current (training, exports), computes at once. An older
state's figures are never presented as current. When nothing is kept yet (the first view of a big project), no
request computes them either: :func:`kept` starts the job (:func:`pending_job`: once) and raises
:class:`~annotation.errors.BeingComputed`, which the API answers ``202 Accepted`` and a page shows as
"computing … (started at …)" until the job has kept them.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar

from django.core.cache import cache
from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import Count, Max
from django.utils import timezone

from annotation.digest import digest
from annotation.errors import BeingComputed
from annotation.models import (
    Adjudication,
    AdjudicationChange,
    AlignmentRun,
    Article,
    ArticleCompletion,
    CandidatePair,
    KeptAggregate,
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


def cached_value(project: Project, name: str, current: str) -> Any:
    """What :func:`cached` holds for the ``name``d aggregate at the state ``current``, or None."""
    return cache.get(f"review:{project.pk}:{name}:{current}")


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


LAZY_ARTICLES = 1000
"""From this many articles a page shows kept figures of an older state ("as of …, updating") while a job
computes the new ones, rather than computing them while it answers (seconds at 20,000 article pairs)."""


@dataclass(frozen=True)
class Kept(Generic[T]):
    """A kept aggregate: its ``value``, when it was computed (``as_of``) and whether it is of the data as they
    are now (``current``; False: an older state's, shown as "as of …, updating" while a job computes anew)."""

    value: T
    as_of: datetime
    current: bool


REFRESH_EVERY_S = 60
"""A project's job of one kind that computes kept figures starts at most this often: while data change all the
time (annotators labelling, a run writing pairs) a page shows figures at most this much older than the jobs' own
time, "updating", instead of keeping a worker computing them back to back."""


def start_refresh(project: Project, kind: str, params: dict | None = None, *, user=None) -> bool:
    """Start the ``kind`` job computing kept figures of ``project`` (``params``: which ones; ``user``: who asked)
    unless one is queued or running, or one finished within :data:`REFRESH_EVERY_S` seconds; whether it started one."""
    from annotation.models import Job, Status
    from annotation.services.background import jobs

    mine = Job.objects.filter(project=project, kind=kind, **({"params": params} if params else {}))
    recent = timezone.now() - timedelta(seconds=REFRESH_EVERY_S)
    if mine.filter(status__in=(Status.QUEUED, Status.RUNNING)).exists() or mine.filter(finished_at__gte=recent).exists():
        return False
    jobs.start_job(project, kind, params=params, user=user)
    return True


def pending_job(project: Project, kind: str, params: dict | None = None, *, user=None):
    """The queued or running ``kind`` job of ``project`` (with ``params``), or one started now: the job a page with
    nothing kept waits for (no throttle: there is nothing older to show meanwhile; one at a time, as
    :func:`start_refresh`)."""
    from annotation.models import Job, Status
    from annotation.services.background import jobs

    mine = Job.objects.filter(project=project, kind=kind, **({"params": params} if params else {}))
    found = mine.filter(status__in=(Status.QUEUED, Status.RUNNING)).order_by("-pk").first()
    return found or jobs.start_job(project, kind, params=params, user=user)


def job_summary(job) -> dict:
    """What a "being computed" answer says of ``job``: ``{"id", "kind", "status", "created_at", "started_at"}``."""
    return {"id": job.pk, "kind": job.kind, "status": job.status, "created_at": job.created_at.isoformat(),
            "started_at": job.started_at.isoformat() if job.started_at else None}


def being_computed(project: Project, what: str, kind: str, params: dict | None = None, *, user=None) -> BeingComputed:
    """The :class:`~annotation.errors.BeingComputed` of ``what`` (a sentence's subject), its job
    (:func:`pending_job`) started when none is queued or running."""
    return BeingComputed(what, job_summary(pending_job(project, kind, params, user=user)))


@dataclass(frozen=True)
class Refresh:
    """The background job that computes a kept aggregate for a big project's readers: its job ``kind`` and
    ``params``, and ``what`` it computes (a sentence's subject: "the dashboard's figures")."""

    kind: str
    params: dict | None = None
    what: str = "the figures"


def _kept_key(project: Project, name: str, now: str) -> str:
    return f"review-kept:{project.pk}:{name}:{now}"


def is_big(project: Project) -> bool:
    """Whether ``project`` has :data:`LAZY_ARTICLES` articles or more (an index read, not a count)."""
    return Article.objects.filter(project_id=project.pk).order_by()[LAZY_ARTICLES - 1:LAZY_ARTICLES].exists()


def _plain(value: Any) -> Any:
    """``value`` as the database will give it back (JSON: lists for tuples, text keys and times), so the first
    reader and every later one see the same; ValueError when it has no JSON form (NaN, a set)."""
    return json.loads(json.dumps(value, cls=DjangoJSONEncoder, allow_nan=False))


def kept(project: Project, name: str, compute: Callable[[], T], *, current: str | None = None,
         refresh: Refresh | None = None) -> Kept[T]:
    """The ``name``d aggregate of ``project`` as :func:`cached`, and kept in the database (module docstring).

    Read in turn: the cache under the state now; the database row when its state is the state now (then
    cached); when ``refresh`` is given (the reader's background job) and the project :func:`is_big`: the row as
    it is (``current=False``) after starting the job (:func:`start_refresh`), or, with no row yet,
    :class:`~annotation.errors.BeingComputed` after starting it (:func:`pending_job`); otherwise ``compute()``
    now, stored in the row and the cache. Values are kept in their JSON form (:func:`_plain`).

    Raises:
        BeingComputed: a big project's aggregate that nothing computed yet, with its job (``refresh`` given)."""
    now = current or state(project)
    key = _kept_key(project, name, now)
    found = cache.get(key)
    if found is not None:
        return Kept(found[0], found[1], True)
    row = KeptAggregate.objects.filter(project_id=project.pk, name=name).first()
    if row is not None and row.state == now:
        cache.set(key, (row.value, row.computed_at), TTL_S)
        return Kept(row.value, row.computed_at, True)
    if refresh is not None and is_big(project):
        if row is None:
            raise being_computed(project, refresh.what, refresh.kind, refresh.params)
        start_refresh(project, refresh.kind, refresh.params)
        return Kept(row.value, row.computed_at, False)
    return store(project, name, compute, now)


def store(project: Project, name: str, compute: Callable[[], T], now: str | None = None) -> Kept[T]:
    """``compute()`` the ``name``d aggregate of the data ``now`` (their :func:`state`, read before computing:
    a write while it computes moves the state on, so the next reader computes again), kept in the database
    and the cache — what a background job calls."""
    now = now or state(project)
    t0 = time.perf_counter()
    value = compute()
    try:
        value = _plain(value)
    except (TypeError, ValueError):  # no JSON form: kept in the cache only
        as_of = timezone.now()
        cache.set(_kept_key(project, name, now), (value, as_of), TTL_S)
        return Kept(value, as_of, True)
    row, _ = KeptAggregate.objects.update_or_create(
        project_id=project.pk, name=name,
        defaults={"state": now, "value": value, "computed_at": timezone.now(), "seconds": time.perf_counter() - t0})
    cache.set(_kept_key(project, name, now), (value, row.computed_at), TTL_S)
    return Kept(value, row.computed_at, True)
