"""What the annotator is told about their queue: items done and an estimate of those left.

The annotator's own counts are exact (one query); the queue's size and its taken places are cached
for a few seconds (one request recounts while the others use the last count), so the estimate can come
with every answer of the queue.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from django.core.cache import cache
from django.db import connection
from django.db.models import Count, Q

from annotation.models import Assignment, CandidatePair, Membership, Project
from annotation.services import audit
from annotation.services.background.one_core import one_core
from annotation.services.review import qc
from annotation.services.review.queue_serving import (
    Mine,
    assignments_of,
    available,
    my_counts,
    queue_pairs,
    reviewing_changes,
    taken_places,
    test_pairs,
    test_slot,
    tests_apply,
)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Progress:
    done: int
    remaining: int

    def as_dict(self) -> dict:
        return {"done": self.done, "remaining": self.remaining, "total": self.done + self.remaining}


QUEUE_SIZE_TTL_S = 30
TAKEN_TTL_S = 30  # counted up on every serve meanwhile; at 1M pairs a recount is ~0.5 s (issue 37: was 5)


def queue_size(project: Project, newest_pair: int | None = None) -> int:
    """How many pairs the project's queue holds; cached briefly (it changes with runs, imports and gold).
    ``newest_pair``: the newest pair id when the caller loaded it already (else it is looked up)."""
    run = (project.config or {}).get("queue_run")
    if newest_pair is None:
        # Any new pair anywhere changes the key (an index-only look-up); new gold expires with the TTL.
        newest_pair = CandidatePair.objects.order_by("-id").values_list("id", flat=True).first()
    changes = reviewing_changes(project)
    changes = f"{changes['old']}-{changes['new']}" if changes else ""
    family = f"alignapp:queue-size:{project.pk}:{_stamp(project)}:{run}:{changes}"
    return _cached_count(f"{family}:{newest_pair}", lambda: queue_pairs(project), family=family)


LAST_TTL_S = 600  # how long the last count is kept for the requests that arrive while it is counted again
COUNTING_S = 60  # one process recounts at a time; a recount that died frees the turn after this
# a last count this large is recounted on a thread while requests answer with it: its cost grows with it (at 1M
# pairs, 0.24 s for 991,500 pairs and 0.16 s for 108,000 taken places); a size, not a time, so a small project
# (every test) always counts in the request, however loaded the machine
BACKGROUND_FROM = 50_000
LARGE_TTL_FACTOR = 10  # such a count is kept 10× longer: an estimate of a million moves little in 5 minutes


def _cached_count(key: str, rows, ttl: int = QUEUE_SIZE_TTL_S, *, family: str | None = None) -> int:
    """``rows().count()``, cached for ``ttl`` seconds under ``key``.

    When it expires, one request counts again and the others answer with the last count meanwhile
    (issue 37: at a million pairs a count takes about half a second, and every request of the queue
    missing it at the same moment counted it at once). When the last count was :data:`BACKGROUND_FROM` or
    more, that one request answers with the last count too and the recount runs on a thread, on one
    core: counted in the request, PostgreSQL's parallel workers took both cores of the 2-core bench
    machine for half a second every 30 s, and the queue's 200 annotators waited 0.1–0.7 s behind it
    (issue 37, 2026-11-28); such a count is also kept :data:`LARGE_TTL_FACTOR` times longer. ``family``: the
    part of ``key`` the last count stays valid for (the queue's
    size without its newest pair: a pair written anywhere changes the key, not the count's order of size)."""
    count = cache.get(key)
    if count is not None:
        return count
    family = family or key
    last, turn = f"{family}:last", f"{family}:counting"
    before = cache.get(last)
    if not cache.add(turn, 1, COUNTING_S):  # another request recounts
        return before if before is not None else _count(key, last, rows, ttl)
    if before is not None and before >= BACKGROUND_FROM:
        threading.Thread(target=_recount, args=(key, last, turn, rows, ttl), name="queue-recount", daemon=True).start()
        return before
    try:
        return _count(key, last, rows, ttl)
    finally:
        cache.delete(turn)


def _count(key: str, last: str, rows, ttl: int) -> int:
    count = rows().count()
    factor = LARGE_TTL_FACTOR if count >= BACKGROUND_FROM else 1
    cache.set(key, count, ttl * factor)
    cache.set(last, count, LAST_TTL_S * factor)
    return count


def _recount(key: str, last: str, turn: str, rows, ttl: int) -> None:
    """A slow count, recounted on its own thread (its own database connection, closed after) without
    PostgreSQL's parallel workers (:func:`~annotation.services.background.one_core.one_core`)."""
    try:
        with one_core():
            _count(key, last, rows, ttl)
    except Exception:  # noqa: BLE001 - an estimate: the last count stays, the next expiry counts again
        logger.warning("recounting %s failed", key, exc_info=True)
    finally:
        cache.delete(turn)
        connection.close()


def _stamp(project: Project) -> str:
    # Keys carry the creation time too: test databases hand out the same ids again.
    return str(project.created_at.timestamp()) if project.created_at else ""


def _taken_key(project: Project) -> str:
    return f"alignapp:queue-taken:{project.pk}:{_stamp(project)}"


def _taken(project: Project, excluded) -> int:
    """Places taken in the whole queue (a count over every active assignment of the project): cached
    for ``TAKEN_TTL_S`` in the cache (shared by every process with ``CACHE_URL``), and counted up when a
    fresh pair is served."""
    return _cached_count(_taken_key(project), lambda: taken_places(excluded).filter(
        pair__article__project=project, pair__gold__isnull=True), TAKEN_TTL_S)


def count_served(project: Project) -> None:
    try:
        cache.incr(_taken_key(project))
    except ValueError:  # not cached (or expired): the next count is exact anyway
        pass


def progress(user, project: Project, excluded=None) -> Progress:
    """Items the annotator finished, and an estimate of how many are still there for them: their
    open and skipped items plus the smaller of the queue's free places and the pairs they have not
    seen. Cheap enough to come with every answer: the annotator's own counts are exact (one query),
    the queue's size and its taken places are cached for a few seconds."""
    excluded = Membership.objects.excluded(project) if excluded is None else excluded
    mine = my_counts(user, project)
    return estimate(project, qc.qc_config(project), excluded, done=mine.done, waiting=mine.waiting, seen=mine.seen,
                     user=user, assigned=mine.total)


def estimate(project: Project, config: qc.QcConfig, excluded, *, done: int, waiting: int, seen: int,
              newest_pair: int | None = None, user=None, assigned: int = 0) -> Progress:
    if user is not None and reviewing_changes(project) is not None:
        return changes_progress(user, project, config, excluded)
    pairs = queue_size(project, newest_pair)
    fresh = max(0, min(pairs * config.overlap - _taken(project, excluded), pairs - seen))
    tests = planned_tests(user, project, config, assigned=assigned, fresh=fresh, answered=assigned - seen) \
        if user is not None else 0
    return Progress(done=done, remaining=waiting + fresh + tests)


def changes_progress(user, project: Project, config: qc.QcConfig, excluded) -> Progress:
    """Review of changes: exact counts over the changed pairs only (no test questions, nothing of the
    whole queue): done = the changed pairs this reviewer labelled, left = their open and skipped
    changed pairs plus the changed pairs with a free place they have not had. For a reviewer starting
    out, left is the number of changed pairs the queue holds."""
    changed = queue_pairs(project)
    mine = (assignments_of(user, project).filter(is_test=False, pair__in=changed)
            .aggregate(done=Count("id", filter=Q(status=Assignment.DONE)),
                       waiting=Count("id", filter=Q(status__in=(Assignment.OPEN, Assignment.SKIPPED)))))
    return Progress(done=mine["done"], remaining=mine["waiting"] + available(user, project, config, excluded).count())


def _test_pair_count(project: Project) -> int:
    """The project's test questions (pairs with gold), cached like the queue's size."""
    return _cached_count(f"alignapp:queue-tests:{project.pk}:{_stamp(project)}", lambda: test_pairs(project))


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


def progress_of(project: Project, config: qc.QcConfig, excluded, mine: Mine, pair: CandidatePair | None,
                 newest_pair: int | None, user=None) -> Progress:
    if pair is None:
        return Progress(done=mine.done, remaining=0)
    return estimate(project, config, excluded, done=mine.done, waiting=mine.waiting, seen=mine.seen,
                     newest_pair=newest_pair, user=user, assigned=mine.total)


def changes_review(user, project: Project) -> dict | None:
    """What every queue page says while the project's queue is in review of changes (None for the
    whole queue): the two runs, how many changed pairs the queue holds and how many are left for
    ``user``, and who narrowed it when (the audit log's last ``queue.review_changes``)."""
    changes = reviewing_changes(project)
    if changes is None:
        return None
    event = audit.events(project=project, action="queue.review_changes").first()
    return {"old": changes["old"], "new": changes["new"], "pairs": queue_pairs(project).count(),
            "left": progress(user, project).remaining, "by": event.actor.get_username() if event and event.actor else "",
            "since": event.created_at if event else None}
