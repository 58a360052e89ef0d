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
from dataclasses import dataclass

from django.core.cache import cache
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from ..models import Assignment, CandidatePair, Label, LabelScheme, Project, Sentence, Side
from . import labelling, qc

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
    """Every pair of the project's queue (before quotas): chosen run or all, work origins only, no gold."""
    qs = CandidatePair.objects.filter(article__project=project, origin__in=QUEUE_ORIGINS, gold__isnull=True)
    run = (project.config or {}).get("queue_run")
    if run not in (None, ""):
        try:
            qs = qs.filter(run_id=int(run))
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


def _taken_places(excluded: set[int]):
    """Queryset of the active (place-taking) assignments of each pair, for counting."""
    return Assignment.objects.filter(status__in=ACTIVE, is_test=False).exclude(annotator_id__in=excluded)


def _available(user, project: Project, config: qc.QcConfig, excluded: set[int]) -> QuerySet[CandidatePair]:
    """Fresh pairs for ``user``: never assigned to them and with a free place."""
    taken = (_taken_places(excluded).filter(pair=OuterRef("pk")).order_by().values("pair")
             .annotate(n=Count("pk")).values("n"))
    return (queue_pairs(project).select_related("article", "complex_document", "simple_document")
            .filter(~Exists(Assignment.objects.filter(pair=OuterRef("pk"), annotator=user)))
            .annotate(taken=Coalesce(Subquery(taken), Value(0)))
            .filter(taken__lt=config.overlap)
            .order_by("id"))


def _count_taken(pair_id: int, excluded: set[int], *, besides=None) -> int:
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


# --- Serving ------------------------------------------------------------------------------------

def next_item(user, project: Project, *, excluded: set[int] | None = None) -> CandidatePair | None:
    """The pair ``user`` should label now, assigning one if needed; None when nothing is left.

    Each attempt to assign a pair is its own short (sub)transaction holding at most one pair lock,
    so serving can never deadlock. Raises ``qc.AnnotatorExcluded`` for annotators removed by QC.
    """
    excluded = qc.excluded_annotator_ids(project) if excluded is None else excluded
    if user.pk in excluded:
        qc.ensure_not_excluded(user, project)
    config = qc.qc_config(project)
    current = (_mine(user, project).filter(status=Assignment.OPEN)
               .select_related("pair__article", "pair__complex_document", "pair__simple_document")
               .order_by("-assigned_at", "-id").first())
    if current is not None:
        return current.pair
    return (_serve_test(user, project, config, excluded) or _serve_fresh(user, project, config, excluded)
            or _serve_skipped(user, project, config, excluded))


def test_slot(project: Project, user, block: int, every: int) -> int:
    """Where in the ``block``-th group of ``every`` items the test question goes (stable per user)."""
    return random.Random(f"{project.pk}:{user.pk}:{block}").randrange(every)


def _serve_test(user, project: Project, config: qc.QcConfig, excluded: set[int]) -> CandidatePair | None:
    if not tests_apply(project, config):
        return None
    block, offset = divmod(_mine(user, project).count(), config.test_every)
    if offset != test_slot(project, user, block, config.test_every):
        return None
    if not _available(user, project, config, excluded).exists():
        return None  # no real work left: don't keep the annotator busy with tests only
    pair = (test_pairs(project).filter(~Exists(Assignment.objects.filter(pair=OuterRef("pk"), annotator=user)))
            .order_by("?").first())
    if pair is None:
        return None
    try:
        with transaction.atomic():
            Assignment.objects.create(pair=pair, annotator=user, is_test=True)
    except IntegrityError:  # the same annotator's other tab got it first
        return None
    return pair


def _serve_fresh(user, project: Project, config: qc.QcConfig, excluded: set[int]) -> CandidatePair | None:
    candidates = _available(user, project, config, excluded)
    for _ in range(MAX_LOCK_TRIES):
        try:
            with transaction.atomic():
                # Rows other annotators are serving right now are skipped; if every candidate is
                # locked, wait for one rather than wrongly answering "all done".
                pair = _lock_first(candidates, skip_locked=True) or _lock_first(candidates, skip_locked=False)
                if pair is None:
                    return None
                # The lock is held: every other writer of this pair's assignments has committed, so
                # fresh counts are exact (the candidate query's snapshot may predate their commit).
                place = Q(status__in=ACTIVE, is_test=False) & ~Q(annotator_id__in=excluded)
                seen = Assignment.objects.filter(pair=pair).aggregate(
                    taken=Count("id", filter=place), mine=Count("id", filter=Q(annotator=user)))
                if seen["taken"] >= config.overlap or seen["mine"]:
                    raise _Retry
                Assignment.objects.create(pair=pair, annotator=user)
                return pair
        except _Retry:
            continue
    return None


def _serve_skipped(user, project: Project, config: qc.QcConfig, excluded: set[int]) -> CandidatePair | None:
    skipped = _mine(user, project).filter(status=Assignment.SKIPPED).order_by("completed_at", "id")
    for assignment in skipped.select_related("pair"):
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
           seconds: float = 0.0, client_token: uuid.UUID | None = None) -> tuple[Label, bool]:
    """Label a pair of the annotator's queue (idempotent per ``client_token``); returns (label, created)."""
    assignment = (_mine(user, project).filter(pair_id=pair_id)
                  .select_related("pair__article__project__label_scheme").first())
    if assignment is None:
        raise NotAssigned(f"pair #{pair_id} is not in your queue; ask for the next item")
    if assignment.status == Assignment.SKIPPED:
        raise NotAssigned(f"you skipped pair #{pair_id}; it comes back at the end of your queue")
    return labelling.submit_label(user, assignment.pair, value=value, ratings=ratings, comment=comment,
                                  seconds=seconds, client_token=client_token, assignment=assignment)


def skip(user, project: Project, pair_id: int) -> None:
    """Put an open item back: it returns after every fresh item (its place is free meanwhile)."""
    updated = _mine(user, project).filter(pair_id=pair_id, status=Assignment.OPEN).update(
        status=Assignment.SKIPPED, completed_at=timezone.now())
    if not updated and not _mine(user, project).filter(pair_id=pair_id, status=Assignment.SKIPPED).exists():
        raise NotAssigned(f"pair #{pair_id} is not open in your queue")


def undo(user, project: Project) -> CandidatePair:
    """Delete the annotator's most recent label in the project and re-open its item, which is then
    the next item served. Raises NothingToUndo."""
    qc.ensure_not_excluded(user, project)
    with transaction.atomic():
        label = (Label.objects.filter(annotator=user, pair__article__project=project)
                 .filter(Exists(Assignment.objects.filter(pair=OuterRef("pair"), annotator=user)))
                 .select_related("pair").order_by("-created_at", "-id").first())
        if label is None:
            raise NothingToUndo("nothing to undo: you have no labels in this project yet")
        pair = label.pair
        label.delete()
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


def queue_size(project: Project) -> int:
    """How many pairs the project's queue holds; cached briefly (it changes with runs, imports and gold)."""
    run = (project.config or {}).get("queue_run")
    # Any new pair anywhere changes the key (an index-only look-up); new gold expires with the TTL.
    newest_pair = CandidatePair.objects.order_by("-id").values_list("id", flat=True).first()
    key = f"alignapp:queue-size:{project.pk}:{run}:{newest_pair}"
    size = cache.get(key)
    if size is None:
        size = queue_pairs(project).count()
        cache.set(key, size, QUEUE_SIZE_TTL_S)
    return size


def progress(user, project: Project, excluded: set[int] | None = None) -> Progress:
    """Items the annotator finished, and an estimate of how many are still there for them: their
    open and skipped items plus the smaller of the queue's free places and the pairs they have not
    seen. Cheap enough to come with every answer (the queue size is cached for a few seconds)."""
    config = qc.qc_config(project)
    excluded = qc.excluded_annotator_ids(project) if excluded is None else excluded
    pairs = queue_size(project)
    taken = _taken_places(excluded).filter(pair__article__project=project, pair__gold__isnull=True).count()
    mine = _mine(user, project).aggregate(done=Count("id", filter=Q(status=Assignment.DONE)),
                                          waiting=Count("id", filter=~Q(status=Assignment.DONE)),
                                          seen=Count("id", filter=Q(is_test=False)))
    fresh = max(0, min(pairs * config.overlap - taken, pairs - mine["seen"]))
    return Progress(done=mine["done"], remaining=mine["waiting"] + fresh)


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


def item_payload(pair: CandidatePair, project: Project, *, with_context: bool = False) -> dict:
    """One pair as the labelling page shows it. Blind: no other annotator's label, and no model
    score or prediction unless the project's config has ``"show_predictions": true``."""
    members = list(pair.members.select_related("sentence__paragraph").order_by("sentence__index"))
    sides = {}
    for side, document in ((Side.COMPLEX, pair.complex_document), (Side.SIMPLE, pair.simple_document)):
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
    }
    if (project.config or {}).get("show_predictions"):
        payload["prediction"] = {"score": pair.score, "label": pair.predicted_label}
    if with_context:
        payload["context"] = context(pair)
    return payload


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


def state(user, project: Project, *, with_context: bool = False, pair: CandidatePair | None = None) -> dict:
    """What the queue endpoints answer: the next item (or None), progress and the label scheme."""
    excluded = qc.excluded_annotator_ids(project)
    if pair is None:
        pair = next_item(user, project, excluded=excluded)
    if pair is not None and "article" not in pair._state.fields_cache:
        pair = CandidatePair.objects.select_related("article", "complex_document", "simple_document").get(pk=pair.pk)
    config = qc.qc_config(project)
    return {
        "item": item_payload(pair, project, with_context=with_context) if pair is not None else None,
        "done": pair is None,
        "message": "" if pair is not None else "All done: there are no more items in your queue. Thank you!",
        "progress": (progress(user, project, excluded) if pair is not None
                     else Progress(done=_mine(user, project).filter(status=Assignment.DONE).count(), remaining=0)).as_dict(),
        "scheme": scheme_payload(project.label_scheme),
        "min_seconds": config.min_seconds,
    }
