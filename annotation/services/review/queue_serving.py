"""Serving the annotators' queue: which pairs it holds, in which order, and claiming one.

* **Which pairs.** The project's candidate pairs whose origin is ``model``, ``candidate`` or
  ``import``, of the run named by ``Project.config["queue_run"]`` or of every run. Pairs with gold
  (an Adjudication) are not queued as work: they are the hidden test questions.
* **Overlap.** Each pair is labelled by ``qc.overlap`` annotators (k). An *active* assignment (open
  or done, of an annotator who was not excluded) takes one of the k places; skipped ones give it
  back. Serving a pair locks its row (``SELECT … FOR NO KEY UPDATE SKIP LOCKED`` on PostgreSQL; on
  SQLite the IMMEDIATE transaction already serialises writers) and re-counts the places after the
  lock, so two annotators can never push a pair past k. Each serving attempt is its own short
  transaction holding one pair lock at most, so serving cannot deadlock.
* **Order** of fresh pairs: :func:`queue_order`. A hidden test question goes once in every
  ``qc.test_every`` items, at a pseudo-random position within each block (:func:`test_slot`).
* Never the same pair twice for one annotator (a unique constraint, too).
* **Frontier** (issue 37, PostgreSQL, corpus order, the whole queue): the walk in id order starts at
  the project's ``QueueFrontier`` (every queue pair below it is full) instead of passing every pair
  already taken; :func:`advance_frontier` raises it, the database's triggers lower it.

``services.review.queue`` puts these together (what comes next, submit, skip, undo).
"""
from __future__ import annotations

import datetime
import json
import random
from dataclasses import dataclass

from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Exists, F, JSONField, Max, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce, JSONObject
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from annotation.errors import StoredConfigError
from annotation.label_schemes import scheme_kind
from annotation.models import Adjudication, Assignment, CandidatePair, Membership, Prediction, Project, QueueFrontier
from annotation.services.review import qc, queue_compiled
from annotation.services.review.queue_compiled import PAIR, USER, compiled

QUEUE_ORIGINS = ("model", "candidate", "import")
ACTIVE = (Assignment.OPEN, Assignment.DONE)
MAX_LOCK_TRIES = 50


def queue_pairs(project: Project, *, start=None) -> QuerySet[CandidatePair]:
    """Every sentence pair of the project's queue (before quotas): each pair once, whichever runs
    predicted it (or only those the run ``config["queue_run"]`` predicted); work origins only, no
    gold, and no pair whose two sides are identical unless ``config["queue_identical"]``.
    ``start``: only pairs from this id on (an expression: the frontier)."""
    # NOT EXISTS rather than ``gold__isnull`` (a LEFT JOIN … IS NULL): the planner estimates an anti-join
    # well, and with a good estimate it walks the pair index in id order for ``available``'s LIMIT 1
    # instead of sorting every candidate.
    config = project.config or {}
    qs = CandidatePair.objects.filter(article__project=project, origin__in=QUEUE_ORIGINS).filter(
        ~Exists(_from(Adjudication.objects.filter(pair=OuterRef("pk")), start)))
    if start is not None:
        qs = qs.filter(id__gte=start)
    if not config.get("queue_identical"):
        qs = qs.filter(identical=False)
    changes = reviewing_changes(project)
    if changes is not None:
        from annotation.services.alignment.run_comparison import only_changed

        qs = only_changed(qs, int(changes["old"]), int(changes["new"]))
    run = config.get("queue_run")
    if run not in (None, ""):
        try:
            qs = qs.filter(Exists(Prediction.objects.filter(pair=OuterRef("pk"), run_id=int(run))))
        except (TypeError, ValueError):
            raise StoredConfigError(f"project config queue_run must be a run id, got {run!r}") from None
    return qs


def reviewing_changes(project: Project) -> dict | None:
    """``config["queue_changes"]`` (``{"old": run, "new": run}``) while the queue is in *review of
    changes* mode, else None. In that mode the queue holds only the pairs whose prediction differs
    between the two runs (never a pair with gold), serves no hidden test questions (nobody reviewing
    there is scored on them) and re-serves no skipped pair outside the changes; "left" counts exactly
    the changed pairs still to review (``queue_progress``)."""
    changes = (project.config or {}).get("queue_changes")
    if isinstance(changes, dict) and changes.get("old") and changes.get("new"):
        return changes
    return None


def test_pairs(project: Project) -> QuerySet[CandidatePair]:
    """Pairs with gold, except imported gold the researcher did not make test questions (issue 18:
    the import's ``test_questions`` option, kept as the article's ``meta["gold_import"]``; gold
    imported before that record existed stays a test question, as it was)."""
    declined = Q(gold__provenance=Adjudication.IMPORTED, article__meta__has_key="gold_import") & ~Q(
        article__meta__gold_import__test_questions=True)
    return CandidatePair.objects.filter(article__project=project, gold__isnull=False).exclude(declined)


def tests_apply(project: Project, config: qc.QcConfig) -> bool:
    # Hidden test questions compare an answer with the pair's gold value: only kinds with gold have one.
    # Review of changes serves changed predictions only: no test questions there (issue 18).
    return config.test_every > 0 and scheme_kind(project.label_scheme).gold and reviewing_changes(project) is None


def assignments_of(user, project: Project) -> QuerySet[Assignment]:
    return Assignment.objects.filter(annotator=user, pair__article__project=project)


def taken_places(excluded) -> QuerySet[Assignment]:
    """Queryset of the active (place-taking) assignments of each pair, for counting. ``excluded``:
    the excluded annotators' ids, a set or a subquery (``Membership.objects.excluded``)."""
    return Assignment.objects.filter(status__in=ACTIVE, is_test=False).exclude(annotator_id__in=excluded)


def available(user, project: Project, config: qc.QcConfig, excluded) -> QuerySet[CandidatePair]:
    """Fresh pairs for ``user``: never assigned to them and with a free place, in the queue's order.

    The plan walks the pair primary key in order and stops at the first hit, so it passes every pair
    already taken before it. With one annotator a pair (``overlap`` 1, the default) "a free place" is
    NOT EXISTS an active assignment: PostgreSQL then merges the pair index with the assignment pair
    index (an anti-join) instead of counting each pair's assignments in a correlated subquery (issue
    37, 15,000 pairs walked on a loaded machine: 27–51 ms → 6–11 ms a claim). It still grows with the
    taken prefix, only about 5× slower. With k > 1 the places are counted. Only the article is joined
    (its title is shown); the documents come with the pair's sentences."""
    start = _frontier(project) if frontier_applies(project) else None
    fresh = (queue_pairs(project, start=start).select_related("article")
             .filter(~Exists(_from(Assignment.objects.filter(pair=OuterRef("pk"), annotator=user), start))))
    if start is not None:  # the claim's caller learns where the walk started
        fresh = fresh.annotate(queue_frontier=start)
    return with_free_place(fresh, config, excluded, start=start).order_by(*queue_order(project))


def _from(related: QuerySet, start) -> QuerySet:
    # The anti-joins' own side bounded by the frontier too: PostgreSQL merges each NOT EXISTS with the
    # pair walk, and a merge join does not carry ``id >= start`` over to the other index by itself.
    return related if start is None else related.filter(pair_id__gte=start)


def with_free_place(pairs: QuerySet[CandidatePair], config: qc.QcConfig, excluded, *, start=None
                    ) -> QuerySet[CandidatePair]:
    """``pairs`` that have fewer than ``overlap`` active places taken (whoever took them); ``start``:
    the frontier the pairs start at, if any."""
    if config.overlap == 1:
        return pairs.filter(~Exists(_from(taken_places(excluded).filter(pair=OuterRef("pk")), start)))
    taken = (taken_places(excluded).filter(pair=OuterRef("pk")).order_by().values("pair")
             .annotate(n=Count("pk")).values("n"))
    return pairs.annotate(taken=Coalesce(Subquery(taken), Value(0))).filter(taken__lt=config.overlap)


# -- the frontier ------------------------------------------------------------------------------------
# How far past the frontier a claimed pair may lie before the frontier is moved up to it: each move is
# three short statements, so it is made once every few dozen claims, not on every one.
FRONTIER_GAP = 64


def frontier_applies(project: Project) -> bool:
    """Whether serving starts at the project's frontier: on PostgreSQL (its triggers keep the frontier
    right), in corpus order (the walk is in id order) and over the whole queue (no ``queue_run``, no
    review of changes: those depend on predictions, whose inserts do not lower it)."""
    config = project.config or {}
    return (connection.vendor == "postgresql" and config.get("queue_order", "corpus") == "corpus"
            and config.get("queue_run") in (None, "") and reviewing_changes(project) is None)


def _frontier(project: Project):
    # a scalar subquery (an InitPlan: the index scan starts at its value), 0 while the project has none
    return Coalesce(Subquery(QueueFrontier.objects.filter(project_id=project.pk).values("below")[:1]), Value(0))


def after_claim(project: Project, config: qc.QcConfig, excluded, pair: CandidatePair) -> None:
    """Move the frontier up when the pair just claimed (outside its transaction) lay far past it."""
    below = getattr(pair, "queue_frontier", None)
    if below is not None and pair.pk - below > FRONTIER_GAP:
        advance_frontier(project, config, excluded)


def advance_frontier(project: Project, config: qc.QcConfig, excluded) -> int | None:
    """Raise the project's frontier to its first queue pair with a free place; returns the new value
    (None: not moved).

    The frontier's row is locked first (``SKIP LOCKED``: when another process is moving it, or a
    change that lowers it is being committed, this one gives up; moving it is never needed for a
    right answer), and only then is the first free pair looked up: every change committed before the
    lock is seen, and every trigger that would lower it waits for this transaction. So no free pair
    is ever left below it."""
    if not frontier_applies(project):
        return None
    with transaction.atomic():
        below = (QueueFrontier.objects.select_for_update(skip_locked=True).filter(project_id=project.pk)
                 .values_list("below", flat=True).first())
        if below is None:  # none yet (or being moved): make one at 0, moved next time
            QueueFrontier.objects.bulk_create([QueueFrontier(project_id=project.pk)], ignore_conflicts=True)
            return None
        start = Value(below)
        first = (with_free_place(queue_pairs(project, start=start), config, excluded, start=start)
                 .order_by("id").values_list("id", flat=True).first())
        if first is None or first <= below:
            return None
        QueueFrontier.objects.filter(project_id=project.pk).update(below=first)
    return first


ORDERS = ("corpus", "random", "uncertainty")


def queue_order(project: Project) -> tuple:
    """The order fresh pairs are served in (``config["queue_order"]``): ``corpus`` (id order: the pairs of one article
    together), ``random`` (a fixed pseudo-random permutation per project), or ``uncertainty`` (active learning: the
    pairs the latest model was least sure about first; see :func:`uncertainty_of`)."""
    order = (project.config or {}).get("queue_order", "corpus")
    if order not in ORDERS:
        raise StoredConfigError(f"project config queue_order must be one of {', '.join(ORDERS)}, got {order!r}")
    if order == "uncertainty":
        return (F("uncertainty").desc(nulls_last=True), "id")
    if order == "random":
        # multiplicative hashing of the id, salted with the project: stable, no extra column, any database
        return ((F("id") * 2654435761 + project.pk * 40503) % 4294967291, "id")
    return ("id",)


def _count_taken(pair_id: int, excluded, *, besides=None) -> int:
    qs = taken_places(excluded).filter(pair_id=pair_id)
    if besides is not None:
        qs = qs.exclude(annotator=besides)
    return qs.count()


def _lock_first(qs: QuerySet[CandidatePair], *, skip_locked: bool) -> CandidatePair | None:
    """The first pair of ``qs``, row-locked until the end of the (sub)transaction."""
    return _locking(qs, skip_locked=skip_locked).first()


def _locking(qs: QuerySet[CandidatePair], *, skip_locked: bool) -> QuerySet[CandidatePair]:
    """``qs`` row-locking what it reads.

    ``FOR NO KEY UPDATE`` rather than ``FOR UPDATE``: serving locks must not block (or deadlock
    with) the foreign-key checks of concurrent label and assignment inserts for the same pair.
    """
    if not connection.features.has_select_for_update:
        return qs  # SQLite: the IMMEDIATE transaction already holds the database's write lock
    kwargs = {"no_key": connection.features.has_select_for_no_key_update}
    if skip_locked and connection.features.has_select_for_update_skip_locked:
        kwargs["skip_locked"] = True
    if connection.features.has_select_for_update_of:
        kwargs["of"] = ("self",)
    return qs.select_for_update(**kwargs)


class Retry(Exception):
    """Roll back one serving attempt (which releases its row lock at once) and try again."""


@dataclass(frozen=True)
class Mine:
    """Counts over the annotator's assignments in the project, from one aggregate query."""

    total: int
    done: int
    open: int
    seen: int  # not test questions
    target: Assignment | None = None  # their assignment of the pair being submitted, if asked for

    @property
    def waiting(self) -> int:
        return self.total - self.done


def _count_aggregates(pair_id: int | None) -> dict:
    aggregates = {"total": Count("id"), "done": Count("id", filter=Q(status=Assignment.DONE)),
                  "open": Count("id", filter=Q(status=Assignment.OPEN)), "seen": Count("id", filter=Q(is_test=False))}
    if pair_id is not None:
        here = Q(pair_id=pair_id)  # at most one row: one assignment per (pair, annotator)
        aggregates.update(t_id=Max("id", filter=here), t_status=Max("status", filter=here),
                          t_test=Count("id", filter=here & Q(is_test=True)), t_at=Max("assigned_at", filter=here))
    return aggregates


def _mine(row: dict, user, pair_id: int | None) -> Mine:
    target = None
    if row.get("t_id") is not None:
        at = row["t_at"]
        if isinstance(at, str):  # read through JSON (:func:`my_counts_column`)
            at = parse_datetime(at)
            at = at if timezone.is_aware(at) else timezone.make_aware(at, datetime.UTC)
        target = Assignment(id=row["t_id"], pair_id=pair_id, annotator=user, status=row["t_status"],
                            is_test=bool(row["t_test"]), assigned_at=at)
    return Mine(row["total"], row["done"], row["open"], row["seen"], target)


def my_counts(user, project: Project, pair_id: int | None = None) -> Mine:
    """The annotator's counts; with ``pair_id``, their assignment of that pair rides along in the same
    query (it is one of the rows counted), so a submit needs no look-up of its own."""
    return _mine(assignments_of(user, project).aggregate(**_count_aggregates(pair_id)), user, pair_id)


def my_counts_column(user, pair_id: int | None = None) -> Subquery:
    """:func:`my_counts` as a column of a query of projects (one JSON object; NULL: no assignment there), so
    the queue's request reads them with the project and the membership (``annotator.load``), in one
    statement (issue 37). :func:`mine_of` turns the value into :class:`Mine`."""
    counts = (Assignment.objects.filter(annotator=user, pair__article__project=OuterRef("pk")).order_by()
              .values("annotator").annotate(mine=JSONObject(**_count_aggregates(pair_id))).values("mine"))
    return Subquery(counts, output_field=JSONField())


def mine_of(value, user, pair_id: int | None) -> Mine:
    """The :class:`Mine` of a :func:`my_counts_column` value."""
    if value is None:
        return Mine(0, 0, 0, 0)
    if isinstance(value, str):
        value = json.loads(value)
    return _mine(value, user, pair_id)


def test_slot(project: Project, user, block: int, every: int) -> int:
    """Where in the ``block``-th group of ``every`` items the test question goes (stable per user)."""
    return random.Random(f"{project.pk}:{user.pk}:{block}").randrange(every)


def test_due(user, project: Project, config: qc.QcConfig, assigned: int) -> bool:
    """Whether the annotator's next item (after ``assigned`` items) is a hidden test question's slot."""
    if not tests_apply(project, config):
        return False
    block, offset = divmod(assigned, config.test_every)
    return offset == test_slot(project, user, block, config.test_every)


def serve_test(user, project: Project, config: qc.QcConfig, excluded, assigned: int) -> CandidatePair | None:
    if not test_due(user, project, config, assigned):
        return None
    # Only while real work is left (Exists): don't keep the annotator busy with tests only.
    pair = (test_pairs(project).filter(~Exists(Assignment.objects.filter(pair=OuterRef("pk"), annotator=user)),
                                       Exists(available(user, project, config, excluded)))
            .select_related("article").order_by("?").first())
    if pair is None:
        return None
    try:
        with transaction.atomic():
            Assignment.objects.create(pair=pair, annotator=user, is_test=True)
    except IntegrityError:  # the same annotator's other tab got it first
        return None
    return pair


def claim(user, project: Project, config: qc.QcConfig, excluded, *, wait: bool) -> CandidatePair | None:
    """One serving attempt, in the caller's transaction: lock the first pair of :func:`available`,
    re-count its places and assign it. None when there is no candidate (with ``wait=False``, also when
    every candidate is being served by someone else right now); raises Retry when its places filled
    meanwhile (the caller must then end the transaction, which releases the lock, before trying again).

    Two statements (issue 37, the labelling loop's cost): the lock (its SQL compiled once per process,
    :func:`queue_compiled.compiled`) and a conditional ``INSERT … SELECT`` that re-counts and assigns. The pair comes
    back with only its id loaded (its other fields load on first use; the item's payload loads it with
    its sentences in one query)."""
    # Rows other annotators are serving right now are skipped; if every candidate is locked, wait
    # for one rather than wrongly answering "all done".
    row = _lock_first_available(user, project, config, excluded, skip_locked=True)
    if row is None and wait:
        row = _lock_first_available(user, project, config, excluded, skip_locked=False)
    if row is None:
        return None
    # The lock is held: every other writer of this pair's assignments has committed, so the INSERT's own
    # snapshot (a new statement) counts exactly (the candidate query's snapshot may predate their commit).
    sql, params, _ = compiled(("assign", project.pk, _excluded_key(excluded)), lambda: _assign_sql(excluded),
                               user=user.pk, pair=row[0])
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    params = [now if p is _NOW else config.overlap if p is _OVERLAP else p for p in params]
    with queue_compiled.cursor() as cursor:  # prepared on PostgreSQL
        cursor.execute(sql, params)
        assigned = cursor.fetchone()
    if assigned is None:
        raise Retry
    pair = CandidatePair.from_db(connection.alias, ["id"], [row[0]])
    if len(row) > 1:
        pair.queue_frontier = row[1]
    return pair


_NOW, _OVERLAP = object(), object()  # filled in at each claim


def _excluded_key(excluded) -> object:
    """What the compiled SQL's exclusion depends on: a subquery is ``Membership.objects.excluded(project)``
    (its SQL depends on the project only, which every key holds); a set of ids is its ids."""
    if isinstance(excluded, QuerySet):
        if excluded.model is not Membership:
            raise TypeError("excluded: Membership.objects.excluded(project) or a set of user ids")
        return "subquery"
    return tuple(sorted(excluded))


def _settings_key(project: Project, config: qc.QcConfig) -> tuple:
    return (project.pk, json.dumps(project.config or {}, sort_keys=True, default=str), config)


def _lock_first_available(user, project: Project, config: qc.QcConfig, excluded, *, skip_locked: bool
                          ) -> tuple | None:
    """(id, the frontier the walk started at, if any) of the first pair of :func:`available`, row-locked
    until the end of the (sub)transaction (see :func:`_lock_first`)."""
    def build() -> tuple[str, list]:
        qs = available(USER, project, config, excluded)
        fields = ("id", "queue_frontier") if start_at_frontier else ("id",)
        sql, params = _locking(qs, skip_locked=skip_locked).values_list(*fields)[:1].query.sql_with_params()
        assert USER in params, "the annotator's id must be a parameter of the compiled claim"
        return sql, list(params), None

    start_at_frontier = frontier_applies(project)
    key = ("lock", *_settings_key(project, config), _excluded_key(excluded), skip_locked, start_at_frontier)
    sql, params, _ = compiled(key, build, user=user.pk)
    with (queue_compiled.cursor() if start_at_frontier else connection.cursor()) as cursor:  # prepared: the hot path
        cursor.execute(sql, params)
        return cursor.fetchone()


def _assign_sql(excluded) -> tuple[str, list]:
    """The conditional ``INSERT … SELECT`` that assigns the locked pair when it still has a free place
    and the annotator never had it (one assignment per annotator and pair)."""
    taken_sql, taken_params = taken_places(excluded).filter(pair_id=PAIR).values("id").query.sql_with_params()
    mine_sql, mine_params = Assignment.objects.filter(pair_id=PAIR, annotator_id=USER).values("id").query.sql_with_params()
    table = connection.ops.quote_name(Assignment._meta.db_table)
    sql = (f"INSERT INTO {table} (pair_id, annotator_id, status, is_test, assigned_at, completed_at) "
           f"SELECT %s, %s, %s, %s, %s, NULL WHERE NOT EXISTS ({mine_sql}) "
           f"AND (SELECT COUNT(*) FROM ({taken_sql}) taken) < %s RETURNING id")
    return sql, [PAIR, USER, Assignment.OPEN, False, _NOW, *mine_params, *taken_params, _OVERLAP], None


def serve_fresh(user, project: Project, config: qc.QcConfig, excluded) -> CandidatePair | None:
    """Assign the first fresh pair with a free place (None: none left); the caller counts it served."""
    for _ in range(MAX_LOCK_TRIES):
        try:
            with transaction.atomic():
                pair = claim(user, project, config, excluded, wait=True)
        except Retry:
            continue
        if pair is not None:
            after_claim(project, config, excluded, pair)
        return pair
    return None


def serve_skipped(user, project: Project, config: qc.QcConfig, excluded) -> CandidatePair | None:
    skipped = assignments_of(user, project).filter(status=Assignment.SKIPPED).order_by("completed_at", "id")
    if reviewing_changes(project) is not None:  # only the changes come back, never a test question
        skipped = skipped.filter(is_test=False, pair__in=queue_pairs(project))
    for assignment in skipped.select_related("pair__article"):
        with transaction.atomic():
            if not assignment.is_test:
                _lock_first(CandidatePair.objects.filter(pk=assignment.pair_id), skip_locked=False)
                if _count_taken(assignment.pair_id, excluded, besides=user) >= config.overlap:
                    continue  # others filled its places meanwhile; it stays skipped
            reopened = Assignment.objects.filter(pk=assignment.pk, status=Assignment.SKIPPED).update(
                status=Assignment.OPEN, assigned_at=timezone.now(), completed_at=None)
        if reopened:
            return assignment.pair
    return None
