"""Submitting labels: one gate for every write path, one label per (sentence pair, annotator).

Every screen that writes a label — the queue, ``POST /api/labels/``, the whole-article view, "My
labels" — goes through here, so the same rules hold everywhere:

* **Input.** Checked once at the edge: the caller builds a
  :class:`~annotation.services.review.label_input.LabelInput` (value of the project's scheme, ratings
  for its kind, text limits the scheme declares, ``seconds``); the gate receives that object.
* **Who.** The caller passes an :class:`~annotation.services.review.annotator.Annotator` context
  (user, project, role, exclusion, QC settings) loaded once per request.
* **Who may label what.** A pair the queue served to the annotator (an :class:`Assignment`), or
  one they labelled before (theirs to edit). The whole-article view labels the pairs of a document
  pair the annotator is aligning (``source="article"``): its time is recorded for the whole save,
  and the per-item minimum time does not apply.
* **Quality control** (``services.qc``): excluded annotators are refused; a queue item must have
  been on screen at least ``min_seconds`` by the server's clock (the time since it was served is
  stored as ``server_seconds``); the overlap quota holds because only served pairs are labelled;
  answers to hidden test questions are stored and scored as such.
* **Nothing overwritten silently.** A resubmission with the same ``client_token`` returns the
  stored label. Another value for a pair the annotator already labelled raises
  :class:`LabelConflict` (the stored value and its time) unless the caller asks for an explicit
  change (``change=True``); every change and every deletion (undo) leaves a :class:`LabelChange`
  with old → new, who, when and from which screen.
* **The same effects on every path.** The three writes (a new label, a change, a deletion)
  each schedule the pair's vote refresh after the commit (its automatic single/majority gold is
  recomputed by ``adjudication.refresh_majority``; adjudicated gold is not touched), and a new test
  answer re-scores the annotator (``qc.record_test_answer``).

This module is the only writer of ``Label`` and ``LabelChange`` rows (``tests/test_repository.py``
checks it). The queue (``services.review.queue``) decides what to serve and calls
:func:`submit_served`, which can claim the annotator's next pair in the label's transaction.
"""
from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from annotation.errors import DomainError
from annotation.label_schemes import SchemeKind
from annotation.models import Adjudication, Assignment, CandidatePair, Label, LabelChange
from annotation.services.review import qc, queue_compiled
from annotation.services.review.adjudication import SETTLED, refresh_majority
from annotation.services.review.annotator import Annotator
from annotation.services.review.label_input import LabelInput, LabelInputError

# the limits of the built-in scheme kinds (a scheme's own are ``scheme_kind(scheme).value_chars`` ...)
MAX_VALUE_CHARS, MAX_COMMENT_CHARS = SchemeKind.value_chars, SchemeKind.comment_chars

QUEUE, API, ARTICLE, MY_LABELS, UNDO = (LabelChange.QUEUE, LabelChange.API, LabelChange.ARTICLE,
                                        LabelChange.MY_LABELS, LabelChange.UNDO)
SOURCES = (QUEUE, API, ARTICLE, MY_LABELS)


class NotServed(DomainError, ValueError):
    """The pair was not served to this annotator and is not theirs to edit (the queue's refusal too)."""

    status, code = 403, "not_served"


class LabelConflict(DomainError, ValueError):
    """The annotator labelled this pair before with another value, and did not ask to change it."""

    status, code = 409, "conflict"

    def __init__(self, label: Label) -> None:
        self.label = label
        when = timezone.localtime(label.updated_at).strftime("%Y-%m-%d %H:%M:%S")
        super().__init__(f"You labelled this pair {_shown(label)} at {when}. Keep that label, or change it explicitly.")

    def payload(self) -> dict:
        label = self.label
        return {"detail": str(self), "code": "conflict", "pair": label.pair_id,
                "stored": {"id": label.pk, "value": label.value, "ratings": label.ratings, "comment": label.comment,
                           "updated_at": label.updated_at.isoformat(), "created_at": label.created_at.isoformat()}}


def _shown(label: Label) -> str:
    if label.value:
        return repr(label.value)
    return ", ".join(f"{k} {v}" for k, v in sorted((label.ratings or {}).items())) or "(empty)"


# --- Checks --------------------------------------------------------------------------------------

def checked_fields(actor: Annotator, label: LabelInput, assignment: Assignment | None, source: str = QUEUE) -> dict:
    """The label's stored fields once quality control lets ``label`` through (not too fast for a served
    item); raises ``qc.QualityControlError`` otherwise. The caller checked that the annotator may label
    (``actor.ensure_may_label()``, once per write)."""
    served_open = assignment is not None and assignment.status == Assignment.OPEN
    if source != ARTICLE:
        qc.check_seconds(actor.qc_config, label.seconds, assignment)
    server_seconds = (timezone.now() - assignment.assigned_at).total_seconds() if served_open else None
    # a pair the queue holds as a hidden test question is scored as one only when the queue served it
    return {**label.content(), "server_seconds": server_seconds, "source": source,
            "is_test_question": bool(source != ARTICLE and assignment and assignment.is_test)}


# --- History -------------------------------------------------------------------------------------

CONTENT = ("value", "ratings", "comment")


def same_content(label: Label, fields: dict) -> bool:
    return all(getattr(label, name) == fields.get(name, getattr(label, name)) for name in CONTENT)


def _record_change(label: Label, *, new: dict | None, source: str, by=None) -> LabelChange:
    """A history row for ``label`` changing to ``new`` (None: deleted), in the caller's transaction."""
    new = new or {}
    return LabelChange.objects.create(
        pair_id=label.pair_id, annotator_id=label.annotator_id, changed_by=by, label=label if new else None,
        old_value=label.value, old_ratings=label.ratings or {}, old_comment=label.comment, old_at=label.updated_at,
        new_value=new.get("value", ""), new_ratings=new.get("ratings", {}), new_comment=new.get("comment", ""),
        source=source)


def _after_vote(pair_id: int) -> None:
    """The after-commit effects of any write of a pair's votes (every write below calls this; a
    rolled-back write's callback is discarded with it)."""
    transaction.on_commit(lambda: refresh_majority(pair_id))


# --- Writing -------------------------------------------------------------------------------------

def _insert_label(user, pair_id: int, fields: dict, client_token: uuid.UUID | None) -> Label:
    """INSERT the label and mark the assignment done, in the caller's transaction. Raises
    IntegrityError when the label exists already (same ``client_token``, or this annotator labelled
    the pair before): then roll back and call :func:`_store_existing`.

    On PostgreSQL both writes are one statement (:func:`_insert_and_close`, issue 37); elsewhere the
    model's INSERT, then :func:`_done_with_gold`."""
    label = Label(pair_id=pair_id, annotator=user, client_token=client_token or uuid.uuid4(), **fields)
    if connection.vendor == "postgresql":
        gold = _insert_and_close(label)
    else:
        label.save(force_insert=True)
        gold = _done_with_gold(user, pair_id)
    if gold is not False:
        _after_vote(pair_id)
    return label


_LABEL_FIELDS = [f for f in Label._meta.concrete_fields if not f.primary_key]
_INSERT_SQL: dict[str, str] = {}  # per database alias: the SQL has no value in it, only placeholders


def _insert_and_close_sql() -> str:
    """One statement for a queue label (PostgreSQL): the label's ``INSERT`` and its assignment's
    :func:`_done_with_gold` ``UPDATE`` as two data-modifying CTEs, answering (the label's id, whether the
    pair has automatic gold; NULL when no assignment was open). Either fails with the other: a label that
    exists already (``IntegrityError``) closes nothing."""
    q = connection.ops.quote_name
    label, assignment, gold = (q(m._meta.db_table) for m in (Label, Assignment, Adjudication))
    columns = ", ".join(q(f.column) for f in _LABEL_FIELDS)
    values = ", ".join(["%s"] * len(_LABEL_FIELDS))
    return (f"WITH new_label AS (INSERT INTO {label} ({columns}) VALUES ({values}) RETURNING {q('id')}), "
            f"closed AS (UPDATE {assignment} SET status = %s, completed_at = %s "
            f"WHERE annotator_id = %s AND pair_id = %s AND status = %s "
            f"RETURNING EXISTS (SELECT 1 FROM {gold} WHERE pair_id = %s AND provenance NOT IN (%s, %s)) AS gold) "
            f"SELECT (SELECT {q('id')} FROM new_label), (SELECT gold FROM closed)")


def _insert_and_close(label: Label) -> bool | None:
    """Insert ``label`` (its fields prepared as ``Model.save`` prepares them) and close its assignment in one
    statement (:func:`_insert_and_close_sql`); the instance becomes the saved row. Returns what
    :func:`_done_with_gold` returns."""
    sql = _INSERT_SQL.get(connection.alias)
    if sql is None:
        sql = _INSERT_SQL[connection.alias] = _insert_and_close_sql()
    values = [f.get_db_prep_save(f.pre_save(label, True), connection) for f in _LABEL_FIELDS]
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with queue_compiled.cursor() as cursor:  # prepared on PostgreSQL
        cursor.execute(sql, [*values, Assignment.DONE, now, label.annotator_id, label.pair_id, Assignment.OPEN,
                             label.pair_id, *SETTLED])
        label.pk, gold = cursor.fetchone()
    label._state.adding, label._state.db = False, connection.alias
    return gold


def _done_with_gold(user, pair_id: int) -> bool | None:
    """Mark the user's open assignment of the pair done, and learn in the same statement whether the pair
    has automatic gold (majority or single) for the new vote to refresh: None when no assignment was open.

    Issue 37: a queue pair has no gold when it is served (pairs with gold are test questions), so the
    refresh after the commit almost always found none, one statement of every label for nothing. Gold
    that another transaction commits after this statement was computed from votes read before this
    label's commit, as it could be before when that commit fell between this label's commit and the
    refresh's look-up: ``adjudication.auto_gold`` recomputes it from every vote."""
    table, gold = (connection.ops.quote_name(m._meta.db_table) for m in (Assignment, Adjudication))
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET status = %s, completed_at = %s WHERE annotator_id = %s AND pair_id = %s AND status = %s "
            f"RETURNING EXISTS (SELECT 1 FROM {gold} WHERE pair_id = %s AND provenance NOT IN (%s, %s))",
            [Assignment.DONE, connection.ops.adapt_datetimefield_value(timezone.now()), user.pk, pair_id, Assignment.OPEN,
             pair_id, *SETTLED])
        row = cursor.fetchone()
    return None if row is None else bool(row[0])


def _same_token(user, pair_id: int, client_token: uuid.UUID | None) -> Label | None:
    if client_token is None:
        return None
    existing = Label.objects.filter(client_token=client_token).first()
    if existing is not None and (existing.annotator_id != user.pk or existing.pair_id != pair_id):
        raise LabelInputError("client_token: already used for another label")
    return existing


def _store_existing(user, pair_id: int, fields: dict, client_token: uuid.UUID | None, *,
                   change: bool = False) -> tuple[Label, bool]:
    """The slow path after :func:`_insert_label` failed: the same ``client_token`` again returns its
    label untouched; the same content again returns the stored label; other content raises
    :class:`LabelConflict` unless ``change`` (then the change is applied and recorded). If the
    label was deleted meanwhile it is inserted. One transaction per attempt; no savepoints."""
    for attempt in range(3):
        try:
            with transaction.atomic():
                existing = _same_token(user, pair_id, client_token)
                if existing is not None:
                    return existing, False
                label = Label.objects.select_for_update().filter(pair_id=pair_id, annotator=user).first()
                if label is None:
                    return _insert_label(user, pair_id, fields, client_token), True
                if same_content(label, fields):
                    _mark_done(user, pair_id)
                    return label, False
                if not change:
                    raise LabelConflict(label)
                return _apply_change(label, fields, source=fields.get("source", API), by=user), False
        except IntegrityError:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _apply_change(label: Label, fields: dict, *, source: str, by) -> Label:
    """Change ``label`` to ``fields`` with a history row, in the caller's transaction."""
    _record_change(label, new=fields, source=source, by=by)
    now = timezone.now()
    updates = {k: v for k, v in fields.items() if k not in ("is_test_question", "server_seconds", "source")}
    if source != MY_LABELS:  # time spent on the item again adds to the time spent before
        updates["seconds"] = label.seconds + fields["seconds"]
    Label.objects.filter(pk=label.pk).update(**updates, updated_at=now)
    for name, value in updates.items():
        setattr(label, name, value)
    label.updated_at = now
    _mark_done(label.annotator, label.pair_id)
    _after_vote(label.pair_id)
    return label


def _mark_done(user, pair_id: int) -> None:
    Assignment.objects.filter(pair_id=pair_id, annotator=user, status=Assignment.OPEN).update(
        status=Assignment.DONE, completed_at=timezone.now())


def permitted(user, pair: CandidatePair, source: str) -> Assignment | None:
    """The user's assignment of ``pair`` once they may label it from ``source``; raises NotServed.

    The queue and the API need the pair served to them (an assignment, not skipped) or labelled by
    them before; the whole-article view labels any pair of the document pair being aligned."""
    assignment = Assignment.objects.filter(pair=pair, annotator=user).first()
    if source == ARTICLE:
        return assignment
    if assignment is not None and assignment.status != Assignment.SKIPPED:
        return assignment
    if Label.objects.filter(pair=pair, annotator=user).exists():
        return assignment
    if assignment is not None:
        raise NotServed(f"you skipped pair #{pair.pk}; it comes back at the end of your queue")
    raise NotServed(f"pair #{pair.pk} was not served to you: label the items your queue gives you")


def submit_label(actor: Annotator, pair: CandidatePair, label: LabelInput, source: str = API) -> tuple[Label, bool]:
    """Store ``actor``'s ``label`` for ``pair`` (of ``actor.project``) through the gate (module
    docstring); returns (label, created).

    Raises ValueError subclasses with a message for the annotator: LabelInputError, NotServed,
    LabelConflict, ``qc.QualityControlError``. (The queue calls :func:`submit_served`.)"""
    actor.ensure_member()
    existing = _same_token(actor.user, pair.pk, label.client_token)
    if existing is not None:
        return existing, False
    actor.ensure_may_label()
    assignment = permitted(actor.user, pair, source)
    stored = _store(actor, pair.pk, checked_fields(actor, label, assignment, source), label)
    return stored.label, stored.created


@dataclass(frozen=True)
class Stored:
    """What :func:`submit_served` stored: the label, whether it is new, what ``then`` returned (None
    when it did not run) and, when this test answer just excluded the annotator, why."""

    label: Label
    created: bool
    then: Any = None
    excluded_now: str | None = None


def submit_served(actor: Annotator, pair_id: int, assignment: Assignment | None, label: LabelInput, *,
                  then: Callable[[], Any] | None = None) -> Stored:
    """Store the label of a queue item (``source="queue"``) through the gate: ``assignment`` is the
    annotator's assignment of the pair as the queue loaded it (None: never served: NotServed).

    ``then`` runs inside the label's transaction right after a new label's INSERT (the queue claims
    the next pair there, so label + next is one transaction); it does not run when the label existed
    already (a retry, a second tab), and whatever it writes rolls back with the label. An excluded
    annotator is told so first, as on every path (their open items were taken back)."""
    actor.ensure_member()
    actor.ensure_may_label()
    if assignment is None:
        raise NotServed(f"pair #{pair_id} is not in your queue; ask for the next item")
    if assignment.status == Assignment.SKIPPED:
        raise NotServed(f"you skipped pair #{pair_id}; it comes back at the end of your queue")
    return _store(actor, pair_id, checked_fields(actor, label, assignment, QUEUE), label, then=then)


def _store(actor: Annotator, pair_id: int, fields: dict, label: LabelInput,
           then: Callable[[], Any] | None = None) -> Stored:
    """Write checked ``fields``: the fast INSERT (plus ``then``) in one transaction, else the slow
    path of :func:`_store_existing`; then re-score a new test answer."""
    user, token = actor.user, label.client_token
    done = None
    try:
        with transaction.atomic():
            stored, created = _insert_label(user, pair_id, fields, token), True
            if then is not None:
                done = then()
    except IntegrityError:  # labelled before (a retry, a second tab): the slow path, ``then`` not run
        done = None
        stored, created = _store_existing(user, pair_id, fields, token, change=label.change)
    excluded_now = (qc.record_test_answer(user, actor.project, actor.qc_config)
                    if created and fields["is_test_question"] else None)
    return Stored(stored, created, done, excluded_now)


def edit_label(actor: Annotator, label: Label, edit: LabelInput, *, source: str = MY_LABELS) -> Label:
    """``actor`` changes one of their own labels (e.g. from "My labels") to ``edit`` (parsed at the edge,
    :meth:`LabelInput.from_data` with ``editing=label``): no minimum time (the item is not being served),
    the old value kept in the history."""
    if label.annotator_id != actor.user.pk:
        raise NotServed("you can only edit your own labels")
    actor.ensure_member()
    actor.ensure_may_label()
    with transaction.atomic():
        label = Label.objects.select_for_update().get(pk=label.pk)
        fields = edit.content()
        if same_content(label, fields):
            return label
        return _apply_change(label, fields, source=source, by=actor.user)


def delete_label(user, label: Label, *, source: str = UNDO) -> None:
    """Delete ``label``, keeping its content in the history (undo), in the caller's transaction."""
    _record_change(label, new=None, source=source, by=user)
    pair_id = label.pair_id
    label.delete()
    _after_vote(pair_id)
