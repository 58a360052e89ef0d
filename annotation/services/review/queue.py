"""The annotators' work queue: which pair each annotator labels next.

* **Which pairs.** The project's candidate pairs whose origin is ``model``, ``candidate`` or
  ``import``, of the run named by ``Project.config["queue_run"]`` or of every run. Pairs with gold
  (an Adjudication) are not queued as work: they are the hidden test questions.
* **Overlap.** Each pair is labelled by ``qc.overlap`` annotators (k). An *active* assignment (open
  or done, of an annotator who was not excluded) takes one of the k places; skipped ones give it
  back. Serving a pair locks its row (``SELECT … FOR NO KEY UPDATE SKIP LOCKED`` on PostgreSQL; on
  SQLite the IMMEDIATE transaction already serialises writers) and re-counts the places after the
  lock, so two annotators can never push a pair past k. Each serving attempt is its own short
  transaction holding one pair lock at most, so serving cannot deadlock.
* **Order.** An open assignment is returned again (resume after a reload; after an undo the undone
  pair); then a hidden test question once in every ``qc.test_every`` items (at a pseudo-random
  position within each block); then fresh pairs in id order (pairs of one article stay together,
  and items are completed k-fold before new ones start); skipped pairs come back last.
* Never the same pair twice for one annotator (a unique constraint, too).
"""
from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, replace

from django.core.cache import cache
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Exists, F, Max, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.models import (
    Adjudication,
    Assignment,
    CandidatePair,
    Label,
    LabelScheme,
    Prediction,
    Project,
    Sentence,
    Side,
)
from annotation.services.review import labelling, qc, word_diff

QUEUE_ORIGINS = ("model", "candidate", "import")
ACTIVE = (Assignment.OPEN, Assignment.DONE)
CONTEXT_SENTENCES = 2  # neighbours shown on each side of the pair, besides its whole paragraphs
MAX_LOCK_TRIES = 50


class QueueError(ValueError):
    """A queue action that cannot be done (message for the annotator)."""


class NotAssigned(QueueError):
    pass


class NothingToUndo(QueueError):
    pass


# --- Scope --------------------------------------------------------------------------------------

def queue_pairs(project: Project) -> QuerySet[CandidatePair]:
    """Every sentence pair of the project's queue (before quotas): each pair once, whichever runs
    predicted it (or only those the run ``config["queue_run"]`` predicted); work origins only, no
    gold, and no pair whose two sides are identical unless ``config["queue_identical"]``."""
    # NOT EXISTS rather than ``gold__isnull`` (a LEFT JOIN … IS NULL): the planner estimates an anti-join
    # well, and with a good estimate it walks the pair index in id order for ``_available``'s LIMIT 1
    # instead of sorting every candidate.
    config = project.config or {}
    qs = CandidatePair.objects.filter(article__project=project, origin__in=QUEUE_ORIGINS).filter(
        ~Exists(Adjudication.objects.filter(pair=OuterRef("pk"))))
    if not config.get("queue_identical"):
        qs = qs.filter(identical=False)
    changes = config.get("queue_changes")
    if isinstance(changes, dict) and changes.get("old") and changes.get("new"):
        from annotation.services.alignment.run_comparison import only_changed

        qs = only_changed(qs, int(changes["old"]), int(changes["new"]))
    run = config.get("queue_run")
    if run not in (None, ""):
        try:
            qs = qs.filter(Exists(Prediction.objects.filter(pair=OuterRef("pk"), run_id=int(run))))
        except (TypeError, ValueError):
            raise ValueError(f"project config queue_run must be a run id, got {run!r}") from None
    return qs


def test_pairs(project: Project) -> QuerySet[CandidatePair]:
    return CandidatePair.objects.filter(article__project=project, gold__isnull=False)


def tests_apply(project: Project, config: qc.QcConfig) -> bool:
    # A Likert rating has no single gold value to compare with.
    return config.test_every > 0 and project.label_scheme.kind == LabelScheme.CATEGORICAL


def _mine(user, project: Project) -> QuerySet[Assignment]:
    return Assignment.objects.filter(annotator=user, pair__article__project=project)


def _taken_places(excluded) -> QuerySet[Assignment]:
    """Queryset of the active (place-taking) assignments of each pair, for counting. ``excluded``:
    the excluded annotators' ids, a set or a subquery (``qc.excluded_annotators``)."""
    return Assignment.objects.filter(status__in=ACTIVE, is_test=False).exclude(annotator_id__in=excluded)


def _available(user, project: Project, config: qc.QcConfig, excluded) -> QuerySet[CandidatePair]:
    """Fresh pairs for ``user``: never assigned to them and with a free place, in id order.

    The plan walks the pair primary key in order and stops at the first hit: per pair one probe of
    ``one_assignment_per_annotator`` (pair, annotator) and one of the assignment pair index. Only
    the article is joined (its title is shown); the documents come with the pair's sentences."""
    taken = (_taken_places(excluded).filter(pair=OuterRef("pk")).order_by().values("pair")
             .annotate(n=Count("pk")).values("n"))
    return (queue_pairs(project).select_related("article")
            .filter(~Exists(Assignment.objects.filter(pair=OuterRef("pk"), annotator=user)))
            .annotate(taken=Coalesce(Subquery(taken), Value(0)))
            .filter(taken__lt=config.overlap)
            .order_by(*queue_order(project)))


ORDERS = ("corpus", "random", "uncertainty")


def queue_order(project: Project) -> tuple:
    """The order fresh pairs are served in (``config["queue_order"]``): ``corpus`` (id order: the pairs
    of one article together), ``random`` (a fixed pseudo-random permutation per project), or
    ``uncertainty`` (active learning: the pairs the latest model was least sure about first; see
    :func:`uncertainty_of`)."""
    order = (project.config or {}).get("queue_order", "corpus")
    if order not in ORDERS:
        raise ValueError(f"project config queue_order must be one of {', '.join(ORDERS)}, got {order!r}")
    if order == "uncertainty":
        return (F("uncertainty").desc(nulls_last=True), "id")
    if order == "random":
        # multiplicative hashing of the id, salted with the project: stable, no extra column, any database
        return ((F("id") * 2654435761 + project.pk * 40503) % 4294967291, "id")
    return ("id",)


def _count_taken(pair_id: int, excluded, *, besides=None) -> int:
    qs = _taken_places(excluded).filter(pair_id=pair_id)
    if besides is not None:
        qs = qs.exclude(annotator=besides)
    return qs.count()


def _lock_first(qs: QuerySet[CandidatePair], *, skip_locked: bool) -> CandidatePair | None:
    """The first pair of ``qs``, row-locked until the end of the (sub)transaction.

    ``FOR NO KEY UPDATE`` rather than ``FOR UPDATE``: serving locks must not block (or deadlock
    with) the foreign-key checks of concurrent label and assignment inserts for the same pair.
    """
    if not connection.features.has_select_for_update:
        return qs.first()  # SQLite: the IMMEDIATE transaction already holds the database's write lock
    kwargs = {"no_key": connection.features.has_select_for_no_key_update}
    if skip_locked and connection.features.has_select_for_update_skip_locked:
        kwargs["skip_locked"] = True
    if connection.features.has_select_for_update_of:
        kwargs["of"] = ("self",)
    return qs.select_for_update(**kwargs).first()


class _Retry(Exception):
    """Roll back one serving attempt (which releases its row lock at once) and try again."""


@dataclass(frozen=True)
class _Mine:
    """Counts over the annotator's assignments in the project, from one aggregate query."""

    total: int
    done: int
    open: int
    seen: int  # not test questions
    target: Assignment | None = None  # their assignment of the pair being submitted, if asked for

    @property
    def waiting(self) -> int:
        return self.total - self.done


def _my_counts(user, project: Project, pair_id: int | None = None) -> _Mine:
    """The annotator's counts; with ``pair_id``, their assignment of that pair rides along in the same
    query (it is one of the rows counted), so a submit needs no look-up of its own."""
    aggregates = {"total": Count("id"), "done": Count("id", filter=Q(status=Assignment.DONE)),
                  "open": Count("id", filter=Q(status=Assignment.OPEN)), "seen": Count("id", filter=Q(is_test=False))}
    if pair_id is not None:
        here = Q(pair_id=pair_id)  # at most one row: one assignment per (pair, annotator)
        aggregates.update(t_id=Max("id", filter=here), t_status=Max("status", filter=here),
                          t_test=Count("id", filter=here & Q(is_test=True)), t_at=Max("assigned_at", filter=here))
    row = _mine(user, project).aggregate(**aggregates)
    target = None
    if row.get("t_id") is not None:
        target = Assignment(id=row["t_id"], pair_id=pair_id, annotator=user, status=row["t_status"],
                            is_test=bool(row["t_test"]), assigned_at=row["t_at"])
    return _Mine(row["total"], row["done"], row["open"], row["seen"], target)


# --- Serving ------------------------------------------------------------------------------------

def next_item(user, project: Project, *, excluded=None, exclusion: str | None | object = qc.NOT_LOADED
              ) -> CandidatePair | None:
    """The pair ``user`` should label now, assigning one if needed; None when nothing is left.

    Each attempt to assign a pair is its own short (sub)transaction holding at most one pair lock,
    so serving can never deadlock. Raises ``qc.AnnotatorExcluded`` for annotators removed by QC
    (``exclusion``: their exclusion reason when the caller loaded it already; None = not excluded).
    """
    qc.ensure_not_excluded(user, project, exclusion)
    excluded = qc.excluded_annotators(project) if excluded is None else excluded
    return _next(user, project, qc.qc_config(project), excluded, _my_counts(user, project))[0]


def _next(user, project: Project, config: qc.QcConfig, excluded, mine: _Mine) -> tuple[CandidatePair | None, _Mine]:
    """:func:`next_item` given the annotator's counts; returns the pair and their counts afterwards."""
    if mine.open:
        current = (_mine(user, project).filter(status=Assignment.OPEN)
                   .select_related("pair__article").order_by("-assigned_at", "-id").first())
        if current is not None:
            return current.pair, mine
    pair = _serve_test(user, project, config, excluded, mine.total)
    if pair is not None:
        return pair, replace(mine, total=mine.total + 1, open=mine.open + 1)
    pair = _serve_fresh(user, project, config, excluded)
    if pair is not None:
        return pair, replace(mine, total=mine.total + 1, open=mine.open + 1, seen=mine.seen + 1)
    pair = _serve_skipped(user, project, config, excluded)
    if pair is not None:
        return pair, replace(mine, open=mine.open + 1)
    return None, mine


def test_slot(project: Project, user, block: int, every: int) -> int:
    """Where in the ``block``-th group of ``every`` items the test question goes (stable per user)."""
    return random.Random(f"{project.pk}:{user.pk}:{block}").randrange(every)


def _test_due(user, project: Project, config: qc.QcConfig, assigned: int) -> bool:
    """Whether the annotator's next item (after ``assigned`` items) is a hidden test question's slot."""
    if not tests_apply(project, config):
        return False
    block, offset = divmod(assigned, config.test_every)
    return offset == test_slot(project, user, block, config.test_every)


def _serve_test(user, project: Project, config: qc.QcConfig, excluded, assigned: int) -> CandidatePair | None:
    if not _test_due(user, project, config, assigned):
        return None
    # Only while real work is left (Exists): don't keep the annotator busy with tests only.
    pair = (test_pairs(project).filter(~Exists(Assignment.objects.filter(pair=OuterRef("pk"), annotator=user)),
                                       Exists(_available(user, project, config, excluded)))
            .select_related("article").order_by("?").first())
    if pair is None:
        return None
    try:
        with transaction.atomic():
            Assignment.objects.create(pair=pair, annotator=user, is_test=True)
    except IntegrityError:  # the same annotator's other tab got it first
        return None
    return pair


def _claim(candidates: QuerySet[CandidatePair], user, config: qc.QcConfig, excluded, *, wait: bool
           ) -> CandidatePair | None:
    """One serving attempt, in the caller's transaction: lock the first candidate, re-count its places
    and assign it. None when there is no candidate (with ``wait=False``, also when every candidate is
    being served by someone else right now); raises _Retry when its places filled meanwhile (the
    caller must then end the transaction, which releases the lock, before trying again)."""
    # Rows other annotators are serving right now are skipped; if every candidate is locked, wait
    # for one rather than wrongly answering "all done".
    pair = _lock_first(candidates, skip_locked=True)
    if pair is None and wait:
        pair = _lock_first(candidates, skip_locked=False)
    if pair is None:
        return None
    # The lock is held: every other writer of this pair's assignments has committed, so fresh
    # counts are exact (the candidate query's snapshot may predate their commit).
    place = Q(status__in=ACTIVE, is_test=False) & ~Q(annotator_id__in=excluded)
    seen = Assignment.objects.filter(pair=pair).aggregate(
        taken=Count("id", filter=place), mine=Count("id", filter=Q(annotator=user)))
    if seen["taken"] >= config.overlap or seen["mine"]:
        raise _Retry
    Assignment.objects.create(pair=pair, annotator=user)
    return pair


def _serve_fresh(user, project: Project, config: qc.QcConfig, excluded) -> CandidatePair | None:
    candidates = _available(user, project, config, excluded)
    for _ in range(MAX_LOCK_TRIES):
        try:
            with transaction.atomic():
                pair = _claim(candidates, user, config, excluded, wait=True)
        except _Retry:
            continue
        if pair is not None:
            _count_served(project)
        return pair
    return None


def _serve_skipped(user, project: Project, config: qc.QcConfig, excluded) -> CandidatePair | None:
    skipped = _mine(user, project).filter(status=Assignment.SKIPPED).order_by("completed_at", "id")
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


# --- Actions ------------------------------------------------------------------------------------

def submit(user, project: Project, pair_id: int, *, value: str = "", ratings: dict | None = None, comment: str = "",
           seconds: float = 0.0, client_token: uuid.UUID | None = None,
           exclusion: str | None | object = qc.NOT_LOADED, change: bool = False) -> tuple[Label, bool]:
    """Label a pair of the annotator's queue (idempotent per ``client_token``); returns (label, created).
    Another value for a pair they labelled already raises ``labelling.LabelConflict`` unless ``change``."""
    label, created, *_ = _submit(user, project, pair_id, value=value, ratings=ratings, comment=comment,
                                   seconds=seconds, client_token=client_token, exclusion=exclusion, serve=False,
                                   change=change)
    return label, created


def submit_and_next(user, project: Project, pair_id: int, *, value: str = "", ratings: dict | None = None,
                    comment: str = "", seconds: float = 0.0, client_token: uuid.UUID | None = None,
                    exclusion: str | None | object = qc.NOT_LOADED, with_context: bool = False,
                    newest_pair: int | None = None, change: bool = False, reveal: bool = False
                    ) -> tuple[Label, bool, dict]:
    """:func:`submit`, then :func:`state` with the next item: (label, created, state).

    The common case takes one transaction: the label, its assignment, and the next fresh pair
    (locked, re-counted and assigned exactly as :func:`next_item` does). Anything else (a test
    answer, a test question's turn, an open item to resume, a label given before, every candidate
    being served by someone else) goes the general way after the label's commit.
    """
    label, created, mine, served, excluded_now = _submit(
        user, project, pair_id, value=value, ratings=ratings, comment=comment, seconds=seconds,
        client_token=client_token, exclusion=exclusion, serve=True, change=change)
    if excluded_now:  # this test answer just excluded them: the label stays, no next item
        qc.ensure_not_excluded(user, project)
    config = qc.qc_config(project)
    excluded = qc.excluded_annotators(project)
    closed = mine.target.status == Assignment.OPEN  # the label closed it
    mine = replace(mine, done=mine.done + closed, open=mine.open - closed)
    if served is None:
        pair, mine = _next(user, project, config, excluded, mine)
    else:
        pair, mine = served, replace(mine, total=mine.total + 1, open=mine.open + 1, seen=mine.seen + 1)
    return label, created, _answer(project, config, pair, _progress_of(project, config, excluded, mine, pair, newest_pair, user),
                                   with_context=with_context, reveal=reveal)


def _submit(user, project: Project, pair_id: int, *, value: str, ratings: dict | None, comment: str, seconds: float,
            client_token: uuid.UUID | None, exclusion, serve: bool, change: bool = False
            ) -> tuple[Label, bool, _Mine, CandidatePair | None, bool]:
    """Store the label; with ``serve``, also claim the next fresh pair in the same transaction when
    nothing else comes first. Returns (label, created, the annotator's counts before, the pair served
    or None, whether this (test) answer just excluded the annotator)."""
    mine = _my_counts(user, project, pair_id)
    assignment = mine.target
    if assignment is None:
        raise NotAssigned(f"pair #{pair_id} is not in your queue; ask for the next item")
    if assignment.status == Assignment.SKIPPED:
        raise NotAssigned(f"you skipped pair #{pair_id}; it comes back at the end of your queue")
    fields = labelling.checked_fields(user, project, value=value, ratings=ratings, comment=comment, seconds=seconds,
                                      assignment=assignment, exclusion=exclusion, source=labelling.QUEUE)
    config = qc.qc_config(project)
    still_open = mine.open - (assignment.status == Assignment.OPEN)
    inline = (serve and not assignment.is_test and not still_open
              and not _test_due(user, project, config, mine.total))
    served = None
    try:
        with transaction.atomic():
            label, created = labelling.insert_label(user, pair_id, fields, client_token), True
            if inline:
                excluded = qc.excluded_annotators(project)
                try:  # no waiting for locks here: the label's transaction stays short
                    served = _claim(_available(user, project, config, excluded), user, config, excluded, wait=False)
                except _Retry:
                    served = None  # nothing written; the commit releases the lock, the general way goes on
    except IntegrityError:  # labelled before (a retry, a second tab): the slow path, no serving
        served = None
        label, created = labelling.store_existing(user, pair_id, fields, client_token, change=change)
    if served is not None:
        _count_served(project)
    excluded_now = created and assignment.is_test and qc.record_test_answer(user, project)
    return label, created, mine, served, excluded_now


def skip(user, project: Project, pair_id: int) -> None:
    """Put an open item back: it returns after every fresh item (its place is free meanwhile)."""
    updated = _mine(user, project).filter(pair_id=pair_id, status=Assignment.OPEN).update(
        status=Assignment.SKIPPED, completed_at=timezone.now())
    if not updated and not _mine(user, project).filter(pair_id=pair_id, status=Assignment.SKIPPED).exists():
        raise NotAssigned(f"pair #{pair_id} is not open in your queue")


def undo(user, project: Project, *, exclusion: str | None | object = qc.NOT_LOADED) -> CandidatePair:
    """Delete the annotator's most recent label in the project and re-open its item, which is then
    the next item served. Raises NothingToUndo."""
    qc.ensure_not_excluded(user, project, exclusion)
    with transaction.atomic():
        label = (Label.objects.filter(annotator=user, pair__article__project=project)
                 .filter(Exists(Assignment.objects.filter(pair=OuterRef("pair"), annotator=user)))
                 .select_related("pair__article").order_by("-created_at", "-id").first())
        if label is None:
            raise NothingToUndo("nothing to undo: you have no labels in this project yet")
        pair = label.pair
        labelling.delete_label(user, label, source=labelling.UNDO)
        Assignment.objects.filter(pair=pair, annotator=user).update(status=Assignment.OPEN, assigned_at=timezone.now(),
                                                                    completed_at=None)
    return pair


# --- What the annotator sees -----------------------------------------------------------------------

@dataclass(frozen=True)
class Progress:
    done: int
    remaining: int

    def as_dict(self) -> dict:
        return {"done": self.done, "remaining": self.remaining, "total": self.done + self.remaining}


QUEUE_SIZE_TTL_S = 30
TAKEN_TTL_S = 5


def queue_size(project: Project, newest_pair: int | None = None) -> int:
    """How many pairs the project's queue holds; cached briefly (it changes with runs, imports and gold).
    ``newest_pair``: the newest pair id when the caller loaded it already (else it is looked up)."""
    run = (project.config or {}).get("queue_run")
    if newest_pair is None:
        # Any new pair anywhere changes the key (an index-only look-up); new gold expires with the TTL.
        newest_pair = CandidatePair.objects.order_by("-id").values_list("id", flat=True).first()
    key = f"alignapp:queue-size:{project.pk}:{_stamp(project)}:{run}:{newest_pair}"
    size = cache.get(key)
    if size is None:
        size = queue_pairs(project).count()
        cache.set(key, size, QUEUE_SIZE_TTL_S)
    return size


def _stamp(project: Project) -> str:
    # Keys carry the creation time too: test databases hand out the same ids again.
    return str(project.created_at.timestamp()) if project.created_at else ""


def _taken_key(project: Project) -> str:
    return f"alignapp:queue-taken:{project.pk}:{_stamp(project)}"


def _taken(project: Project, excluded) -> int:
    """Places taken in the whole queue (a count over every active assignment of the project): cached
    for ``TAKEN_TTL_S`` per process, and counted up when this process serves a fresh pair."""
    key = _taken_key(project)
    taken = cache.get(key)
    if taken is None:
        taken = _taken_places(excluded).filter(pair__article__project=project, pair__gold__isnull=True).count()
        cache.set(key, taken, TAKEN_TTL_S)
    return taken


def _count_served(project: Project) -> None:
    try:
        cache.incr(_taken_key(project))
    except ValueError:  # not cached (or expired): the next count is exact anyway
        pass


def progress(user, project: Project, excluded=None) -> Progress:
    """Items the annotator finished, and an estimate of how many are still there for them: their
    open and skipped items plus the smaller of the queue's free places and the pairs they have not
    seen. Cheap enough to come with every answer: the annotator's own counts are exact (one query),
    the queue's size and its taken places are cached for a few seconds."""
    excluded = qc.excluded_annotators(project) if excluded is None else excluded
    mine = _my_counts(user, project)
    return _progress(project, qc.qc_config(project), excluded, done=mine.done, waiting=mine.waiting, seen=mine.seen,
                     user=user, assigned=mine.total)


def _progress(project: Project, config: qc.QcConfig, excluded, *, done: int, waiting: int, seen: int,
              newest_pair: int | None = None, user=None, assigned: int = 0) -> Progress:
    pairs = queue_size(project, newest_pair)
    fresh = max(0, min(pairs * config.overlap - _taken(project, excluded), pairs - seen))
    tests = planned_tests(user, project, config, assigned=assigned, fresh=fresh, answered=assigned - seen) \
        if user is not None else 0
    return Progress(done=done, remaining=waiting + fresh + tests)


def _test_pair_count(project: Project) -> int:
    """The project's test questions (pairs with gold), cached like the queue's size."""
    key = f"alignapp:queue-tests:{project.pk}:{_stamp(project)}"
    count = cache.get(key)
    if count is None:
        count = test_pairs(project).count()
        cache.set(key, count, QUEUE_SIZE_TTL_S)
    return count


def planned_tests(user, project: Project, config: qc.QcConfig, *, assigned: int, fresh: int, answered: int) -> int:
    """How many hidden test questions the annotator will be served among their next items
    (``assigned``: their items so far, ``answered`` of them test questions; ``fresh``: real work left).

    "Left" counts them from the start, so serving one changes the count exactly as serving real work
    does (else "left" would go up by one whenever a test question appears, and give it away). The
    test slots are known in advance (:func:`test_slot`): one in every ``test_every`` positions, used
    while real work is left after it and while test pairs they have not had remain."""
    every = config.test_every
    if fresh <= 0 or not tests_apply(project, config):
        return 0
    if every == 1:
        slots = fresh  # every position is a test's while tests last (at most one per work item is plenty)
    else:
        block, offset = divmod(assigned, every)
        slot = test_slot(project, user, block, every)
        ahead = slot >= offset  # this block's test is still to come
        room = every - offset - ahead  # work items that fit in the rest of this block
        if fresh <= room:
            slots = int(ahead and slot - offset < fresh)
        else:
            full, rest = divmod(fresh - room, every - 1)
            if rest:
                slots = int(ahead) + full + int(test_slot(project, user, block + 1 + full, every) < rest)
            else:  # the last block is full: its test counts unless it comes after its last work item
                last = test_slot(project, user, block + full, every)
                slots = int(ahead) + full - 1 + int(last < every - 1)
    return max(0, min(slots, _test_pair_count(project) - answered))


def scheme_payload(scheme: LabelScheme) -> dict:
    return {"slug": scheme.slug, "name": scheme.name, "kind": scheme.kind,
            "values": [{"value": v["value"], "name": v.get("name", v["value"]), "key": str(v.get("key", ""))}
                       for v in scheme.values],
            "dimensions": list(scheme.dimensions or [])}


def groups(indices: list[int]) -> list[list[int]]:
    """Runs of consecutive sentence indices: ``[3, 4, 7]`` → ``[[3, 4], [7]]`` (an n:m pair's groups)."""
    runs: list[list[int]] = []
    for i in sorted(indices):
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def _sentence(s: Sentence, members: set[int] | None = None) -> dict:
    data = {"index": s.index, "paragraph": s.paragraph.index, "text": s.text}
    if members is not None:
        data["in_pair"] = s.index in members
    return data


def item_payload(pair: CandidatePair, project: Project, *, with_context: bool = False, reveal: bool = False) -> dict:
    """One pair as the labelling page shows it. Blind: no other annotator's label, and no model
    score, prediction or reason for serving it unless ``reveal`` (the viewer is a researcher) or the
    project's config has ``"show_predictions": true``."""
    members = list(pair.members.select_related("sentence__paragraph", "sentence__document").order_by("sentence__index"))
    documents = {m.sentence.document_id: m.sentence.document for m in members}
    sides = {}
    for side, field in ((Side.COMPLEX, "complex_document"), (Side.SIMPLE, "simple_document")):
        document = documents.get(getattr(pair, f"{field}_id")) or getattr(pair, field)
        sentences = [m.sentence for m in members if m.side == side]
        indices = [s.index for s in sentences]
        sides[side] = {"document": document.pk, "level": document.level, "indices": indices,
                       "groups": groups(indices), "sentences": [_sentence(s) for s in sentences]}
    payload = {
        "pair": pair.pk,
        "article": {"id": pair.article_id, "title": pair.article.title},
        "complex": sides[Side.COMPLEX],
        "simple": sides[Side.SIMPLE],
        "shape": f"{len(sides[Side.COMPLEX]['indices'])}:{len(sides[Side.SIMPLE]['indices'])}",
        # changed words, matched across each whole side (reordered sentences are not "changed")
        "diff": word_diff.changed_spans(sides[Side.COMPLEX]["sentences"], sides[Side.SIMPLE]["sentences"]),
    }
    if reveal or (project.config or {}).get("show_predictions"):
        payload["prediction"] = {"score": pair.score, "label": pair.predicted_label}
        payload["why"] = why_served(pair, project)
    if with_context:
        payload["context"] = context(pair)
    return payload


def why_served(pair: CandidatePair, project: Project) -> dict:
    """Why the queue picked this pair: the queue's order, the model's uncertainty, what changed
    between the runs under review, and every run's prediction of it."""
    config = project.config or {}
    why = {"order": config.get("queue_order", "corpus"), "uncertainty": pair.uncertainty,
           "predictions": [{"run": r, "method": m, "label": lab, "score": s} for r, m, lab, s in
                           pair.predictions.order_by("-run_id").values_list("run_id", "run__method", "predicted_label",
                                                                            "score")[:5]]}
    changes = config.get("queue_changes")
    if isinstance(changes, dict):
        links = dict(pair.predictions.filter(run_id__in=[changes.get("old"), changes.get("new")])
                     .values_list("run_id", "predicted_label"))
        why["change"] = {"old_run": changes.get("old"), "new_run": changes.get("new"),
                         "old": links.get(changes.get("old"), ""), "new": links.get(changes.get("new"), "")}
    return why


def context(pair: CandidatePair) -> dict:
    """The surroundings of each side: the paragraphs holding the pair's sentences plus
    ``CONTEXT_SENTENCES`` neighbours before and after, in document order."""
    result = {}
    for side, document_id, indices in ((Side.COMPLEX, pair.complex_document_id, pair.complex_indices),
                                       (Side.SIMPLE, pair.simple_document_id, pair.simple_indices)):
        if not indices:
            result[side] = []
            continue
        paragraphs = Sentence.objects.filter(document_id=document_id, index__in=indices).values("paragraph_id")
        window = Q(index__gte=min(indices) - CONTEXT_SENTENCES, index__lte=max(indices) + CONTEXT_SENTENCES)
        sentences = (Sentence.objects.filter(document_id=document_id).filter(window | Q(paragraph_id__in=paragraphs))
                     .select_related("paragraph").order_by("index"))
        result[side] = [_sentence(s, set(indices)) for s in sentences]
    return result


def state(user, project: Project, *, with_context: bool = False, pair: CandidatePair | None = None,
          exclusion: str | None | object = qc.NOT_LOADED, newest_pair: int | None = None, reveal: bool = False) -> dict:
    """What the queue endpoints answer: the next item (or None), progress and the label scheme.
    ``exclusion`` and ``newest_pair``: see :func:`next_item` and :func:`queue_size`."""
    config = qc.qc_config(project)
    excluded = qc.excluded_annotators(project)
    mine = _my_counts(user, project)
    if pair is None:
        qc.ensure_not_excluded(user, project, exclusion)
        pair, mine = _next(user, project, config, excluded, mine)
    return _answer(project, config, pair, _progress_of(project, config, excluded, mine, pair, newest_pair, user),
                   with_context=with_context, reveal=reveal)


def _progress_of(project: Project, config: qc.QcConfig, excluded, mine: _Mine, pair: CandidatePair | None,
                 newest_pair: int | None, user=None) -> Progress:
    if pair is None:
        return Progress(done=mine.done, remaining=0)
    return _progress(project, config, excluded, done=mine.done, waiting=mine.waiting, seen=mine.seen,
                     newest_pair=newest_pair, user=user, assigned=mine.total)


def _answer(project: Project, config: qc.QcConfig, pair: CandidatePair | None, counts: Progress, *,
            with_context: bool, reveal: bool = False) -> dict:
    if pair is not None and "article" not in pair._state.fields_cache:
        pair = CandidatePair.objects.select_related("article").get(pk=pair.pk)
    return {
        "item": item_payload(pair, project, with_context=with_context, reveal=reveal) if pair is not None else None,
        "done": pair is None,
        "message": "" if pair is not None else "All done: there are no more items in your queue. Thank you!",
        "progress": counts.as_dict(),
        "scheme": scheme_payload(project.label_scheme),
        "min_seconds": config.min_seconds,
    }
