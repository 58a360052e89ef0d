"""The annotators' work queue: which pair each annotator labels next, and their actions on it.

* **Order.** An open assignment is returned again (resume after a reload; after an undo the undone
  pair); then a hidden test question once in every ``qc.test_every`` items; then fresh pairs in the
  queue's order; skipped pairs come back last.
* **Pieces.** Which pairs the queue holds and how one is claimed: ``queue_serving``; progress
  estimates: ``queue_progress``; what an item looks like: ``queue_items``. Labels are written only
  by the gate, ``labelling`` (:func:`labelling.submit_served`); this module decides what comes next.
"""
from __future__ import annotations

from dataclasses import replace

from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from annotation.errors import DomainError
from annotation.models import Assignment, CandidatePair, Label, Membership, Project
from annotation.services.review import labelling, qc
from annotation.services.review.annotator import Annotator
from annotation.services.review.label_input import LabelInput
from annotation.services.review.queue_items import item_payload, scheme_payload
from annotation.services.review.queue_progress import Progress, count_served, progress_of
from annotation.services.review.queue_serving import (
    Mine,
    Retry,
    after_claim,
    assignments_of,
    claim,
    my_counts,
    queue_pairs,
    reviewing_changes,
    serve_fresh,
    serve_skipped,
    serve_test,
    test_due,
)


class NothingToUndo(DomainError, ValueError):
    """Undo with no label of the annotator's in the project."""

    code = "nothing_to_undo"


def next_item(actor: Annotator) -> CandidatePair | None:
    """The pair ``actor`` should label now, assigning one if needed; None when nothing is left.

    Each attempt to assign a pair is its own short (sub)transaction holding at most one pair lock,
    so serving can never deadlock. Raises ``qc.AnnotatorExcluded`` for annotators removed by QC.
    """
    actor.ensure_may_label()
    return _next(actor, Membership.objects.excluded(actor.project), my_counts(actor.user, actor.project))[0]


def _next(actor: Annotator, excluded, mine: Mine) -> tuple[CandidatePair | None, Mine]:
    """:func:`next_item` given the annotator's counts; returns the pair and their counts afterwards."""
    user, project, config = actor.user, actor.project, actor.qc_config
    if mine.open:
        opened = assignments_of(user, project).filter(status=Assignment.OPEN)
        if reviewing_changes(project) is not None:  # an item opened before stays for the whole queue
            opened = opened.filter(is_test=False, pair__in=queue_pairs(project))
        current = opened.select_related("pair__article").order_by("-assigned_at", "-id").first()
        if current is not None:
            return current.pair, mine
    pair = serve_test(user, project, config, excluded, mine.total)
    if pair is not None:
        return pair, replace(mine, total=mine.total + 1, open=mine.open + 1)
    pair = serve_fresh(user, project, config, excluded)
    if pair is not None:
        count_served(project)
        return pair, replace(mine, total=mine.total + 1, open=mine.open + 1, seen=mine.seen + 1)
    pair = serve_skipped(user, project, config, excluded)
    if pair is not None:
        return pair, replace(mine, open=mine.open + 1)
    return None, mine


def submit(actor: Annotator, pair_id: int, label: LabelInput) -> tuple[Label, bool]:
    """Label a pair of the annotator's queue (idempotent per ``label.client_token``); returns (label,
    created). Another value for a pair they labelled already raises ``labelling.LabelConflict`` unless
    ``label.change``."""
    stored, created, *_ = _submit(actor, pair_id, label, serve=False)
    return stored, created


def submit_and_next(actor: Annotator, pair_id: int, label: LabelInput, *, with_context: bool = False,
                    mine: Mine | None = None) -> tuple[Label, bool, dict]:
    """:func:`submit`, then :func:`state` with the next item: (label, created, state).

    The common case takes one transaction: the label, its assignment, and the next fresh pair
    (locked, re-counted and assigned exactly as :func:`next_item` does). Anything else (a test
    answer, a test question's turn, an open item to resume, a label given before, every candidate
    being served by someone else) goes the general way after the label's commit. ``mine``: the
    annotator's counts with their assignment of ``pair_id`` when read already (``annotator.load(...,
    counts=True, pair_id=pair_id)``, in the request's first query), else they are read here.
    """
    excluded = Membership.objects.excluded(actor.project)  # a subquery, built once a request
    stored, created, mine, served, excluded_now = _submit(actor, pair_id, label, serve=True, mine=mine,
                                                          excluded=excluded)
    if excluded_now:  # this test answer just excluded them: the label stays, no next item
        raise qc.AnnotatorExcluded(excluded_now)
    closed = mine.target.status == Assignment.OPEN  # the label closed it
    mine = replace(mine, done=mine.done + closed, open=mine.open - closed)
    if served is None:
        pair, mine = _next(actor, excluded, mine)
    else:
        pair, mine = served, replace(mine, total=mine.total + 1, open=mine.open + 1, seen=mine.seen + 1)
    return stored, created, _answer(actor, pair, _progress(actor, excluded, mine, pair), with_context=with_context)


def _progress(actor: Annotator, excluded, mine: Mine, pair: CandidatePair | None) -> Progress:
    return progress_of(actor.project, actor.qc_config, excluded, mine, pair, actor.newest_pair, actor.user)


def _submit(actor: Annotator, pair_id: int, label: LabelInput, *, serve: bool, mine: Mine | None = None,
            excluded=None) -> tuple[Label, bool, Mine, CandidatePair | None, str | None]:
    """Store the label; with ``serve``, also claim the next fresh pair in the same transaction when
    nothing else comes first. Returns (label, created, the annotator's counts before, the pair served
    or None, why this (test) answer just excluded the annotator, else None)."""
    user, project, config = actor.user, actor.project, actor.qc_config
    if mine is None:
        mine = my_counts(user, project, pair_id)
    assignment = mine.target
    excluded = Membership.objects.excluded(project) if excluded is None else excluded
    inline = (serve and assignment is not None and assignment.status != Assignment.SKIPPED
              and not assignment.is_test and not mine.open - (assignment.status == Assignment.OPEN)
              and not test_due(user, project, config, mine.total))

    def claim_next() -> CandidatePair | None:
        try:  # no waiting for locks here: the label's transaction stays short
            return claim(user, project, config, excluded, wait=False)
        except Retry:
            return None  # nothing written; the commit releases the lock, the general way goes on

    stored = labelling.submit_served(actor, pair_id, assignment, label, then=claim_next if inline else None)
    if stored.then is not None:
        count_served(project)
        after_claim(project, config, excluded, stored.then)
    return stored.label, stored.created, mine, stored.then, stored.excluded_now


def skip(user, project: Project, pair_id: int) -> None:
    """Put an open item back: it returns after every fresh item (its place is free meanwhile)."""
    updated = assignments_of(user, project).filter(pair_id=pair_id, status=Assignment.OPEN).update(
        status=Assignment.SKIPPED, completed_at=timezone.now())
    if not updated and not assignments_of(user, project).filter(pair_id=pair_id, status=Assignment.SKIPPED).exists():
        raise labelling.NotServed(f"pair #{pair_id} is not open in your queue")


def undo(actor: Annotator) -> CandidatePair:
    """Delete the annotator's most recent label in the project and re-open its item, which is then
    the next item served. Raises NothingToUndo."""
    actor.ensure_member()
    actor.ensure_may_label()
    user = actor.user
    with transaction.atomic():
        label = (Label.objects.filter(annotator=user, pair__article__project=actor.project)
                 .filter(Exists(Assignment.objects.filter(pair=OuterRef("pair"), annotator=user)))
                 .select_related("pair__article").order_by("-created_at", "-id").first())
        if label is None:
            raise NothingToUndo("nothing to undo: you have no labels in this project yet")
        pair = label.pair
        labelling.delete_label(user, label, source=labelling.UNDO)
        Assignment.objects.filter(pair=pair, annotator=user).update(status=Assignment.OPEN, assigned_at=timezone.now(),
                                                                    completed_at=None)
    return pair


def state(actor: Annotator, *, with_context: bool = False, pair: CandidatePair | None = None) -> dict:
    """What the queue endpoints answer: the next item (or None), progress and the label scheme
    (``pair``: the item to answer with, else the next one)."""
    excluded = Membership.objects.excluded(actor.project)
    mine = my_counts(actor.user, actor.project)
    if pair is None:
        actor.ensure_may_label()
        pair, mine = _next(actor, excluded, mine)
    return _answer(actor, pair, _progress(actor, excluded, mine, pair), with_context=with_context)


def _answer(actor: Annotator, pair: CandidatePair | None, counts: Progress, *, with_context: bool) -> dict:
    project = actor.project
    return {
        "item": item_payload(pair, project, with_context=with_context, reveal=actor.reveal) if pair is not None else None,
        "done": pair is None,
        "message": "" if pair is not None else "All done: there are no more items in your queue. Thank you!",
        "progress": counts.as_dict(),
        "scheme": scheme_payload(project.label_scheme),
        "min_seconds": actor.qc_config.min_seconds,
    }
