"""Submitting labels: validated against the project's scheme, stored once per (pair, annotator).

A resubmission (double click, retry after a dropped connection, a second tab) updates the same
row instead of adding one, so votes are never double-counted. Quality control (``services.qc``)
applies to every label: too-fast labels and excluded annotators are refused, and answers to hidden
test questions are stored as such and re-score the annotator.
"""
from __future__ import annotations

import uuid

from django.db import IntegrityError, transaction
from django.utils import timezone

from ..models import Assignment, CandidatePair, Label, LabelScheme, Project
from . import qc


def validate_value(scheme: LabelScheme, value: str, ratings: dict) -> None:
    if scheme.kind == LabelScheme.LIKERT:
        allowed = set(scheme.value_names())
        missing = [d for d in scheme.dimensions if d not in ratings]
        if missing:
            raise ValueError(f"missing ratings for: {', '.join(missing)}")
        bad = {d: r for d, r in ratings.items() if d not in scheme.dimensions or str(r) not in allowed}
        if bad:
            raise ValueError(f"invalid ratings {bad}; dimensions {scheme.dimensions}, values {sorted(allowed)}")
    elif value not in scheme.value_names():
        raise ValueError(f"{value!r} is not a label of scheme {scheme.slug!r}; choose one of: {', '.join(scheme.value_names())}")


def checked_fields(user, project: Project, *, value: str, ratings: dict | None, comment: str, seconds: float,
                   assignment: Assignment | None, exclusion: str | None | object = qc.NOT_LOADED) -> dict:
    """The label's stored fields once the value is valid for the scheme and quality control lets it
    through (not excluded, not too fast); raises ValueError (``qc.QualityControlError``) otherwise.
    ``exclusion`` is the annotator's exclusion reason when the caller loaded it already."""
    ratings = {k: str(v) for k, v in (ratings or {}).items()}
    validate_value(project.label_scheme, value, ratings)
    qc.ensure_not_excluded(user, project, exclusion)
    qc.check_seconds(qc.qc_config(project), float(seconds), assignment)
    return {"value": value, "ratings": ratings, "comment": comment, "seconds": max(0.0, float(seconds)),
            "is_test_question": bool(assignment and assignment.is_test)}


def insert_label(user, pair_id: int, fields: dict, client_token: uuid.UUID | None) -> Label:
    """INSERT the label and mark the assignment done, in the caller's transaction. Raises
    IntegrityError when the label exists already (same ``client_token``, or this annotator labelled
    the pair before): then roll back and call :func:`store_existing`."""
    label = Label(pair_id=pair_id, annotator=user, client_token=client_token or uuid.uuid4(), **fields)
    label.save(force_insert=True)
    _mark_done(user, pair_id)
    return label


def store_existing(user, pair_id: int, fields: dict, client_token: uuid.UUID | None) -> tuple[Label, bool]:
    """The slow path after :func:`insert_label` failed: the same ``client_token`` again returns its
    label untouched; otherwise the annotator's label of the pair is updated (or, if it was deleted
    meanwhile, inserted). One transaction per attempt; no savepoints."""
    for attempt in range(3):
        try:
            with transaction.atomic():
                if client_token is not None:
                    existing = Label.objects.filter(client_token=client_token).first()
                    if existing is not None:
                        if existing.annotator_id != user.pk or existing.pair_id != pair_id:
                            raise ValueError("client_token already used for another label")
                        return existing, False
                label = Label.objects.filter(pair_id=pair_id, annotator=user).first()
                if label is None:
                    return insert_label(user, pair_id, fields, client_token), True
                now = timezone.now()
                Label.objects.filter(pk=label.pk).update(**fields, updated_at=now)
                for name, value in fields.items():
                    setattr(label, name, value)
                label.updated_at = now
                _mark_done(user, pair_id)
                return label, False
        except IntegrityError:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _mark_done(user, pair_id: int) -> None:
    Assignment.objects.filter(pair_id=pair_id, annotator=user).update(status=Assignment.DONE, completed_at=timezone.now())


def submit_label(user, pair: CandidatePair, *, value: str, ratings: dict | None = None, comment: str = "",
                 seconds: float = 0.0, client_token: uuid.UUID | None = None,
                 assignment: Assignment | None = None) -> tuple[Label, bool]:
    """Store ``user``'s label for ``pair``; returns (label, created).

    ``assignment`` is the user's assignment of the pair when the caller has it already (else it is
    looked up). Raises ValueError (``qc.QualityControlError`` for QC refusals) with a message for
    the annotator. (The queue's submit+next path uses the pieces below directly: ``services.queue``.)
    """
    if client_token is not None:
        existing = Label.objects.filter(client_token=client_token).first()
        if existing is not None:
            if existing.annotator_id != user.pk or existing.pair_id != pair.pk:
                raise ValueError("client_token already used for another label")
            return existing, False
    project = pair.article.project
    if assignment is None:
        assignment = Assignment.objects.filter(pair=pair, annotator=user).first()
    fields = checked_fields(user, project, value=value, ratings=ratings, comment=comment, seconds=seconds,
                            assignment=assignment)
    with transaction.atomic():  # label and assignment in one commit
        try:
            with transaction.atomic():
                label, created = Label.objects.update_or_create(
                    pair=pair, annotator=user, defaults=fields,
                    create_defaults={**fields, "client_token": client_token or uuid.uuid4()},
                )
        except IntegrityError:
            # A concurrent submission of the same label won the race: keep that row, apply ours.
            label = Label.objects.get(pair=pair, annotator=user)
            Label.objects.filter(pk=label.pk).update(**fields)
            label.refresh_from_db()
            created = False
        _mark_done(user, pair.pk)
    if fields["is_test_question"]:
        qc.record_test_answer(user, project)
    return label, created
