"""Deleting an alignment run without losing anybody's work.

The run and its predictions go; a sentence pair goes with it only when this run alone proposed it
and nobody labelled, adjudicated or changed a label of it. Pairs that stay and showed this run's
prediction show their latest remaining one.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Exists, OuterRef

from annotation.errors import DomainError
from annotation.models import Adjudication, AlignmentRun, CandidatePair, Label, LabelChange, Prediction
from annotation.models.jobs import Status
from annotation.services import audit


@dataclass(frozen=True)
class Deleted:
    run: int
    predictions: int
    pairs: int

    def as_dict(self) -> dict[str, int]:
        return {"run": self.run, "predictions": self.predictions, "pairs": self.pairs}


class RunNotDeletable(DomainError, ValueError):
    """A queued or running run: it must be cancelled before it is deleted."""

    code = "run_active"


def delete_run(run: AlignmentRun, *, user=None) -> Deleted:
    """Delete ``run``, its predictions and the pairs only it proposed that carry no human work.

    Raises:
        RunNotDeletable: the run is queued or running (cancel it first).
    """
    if run.status in (Status.QUEUED, Status.RUNNING):
        raise RunNotDeletable(f"run #{run.pk} is {run.status}: cancel it before deleting it")
    with transaction.atomic():
        mine = CandidatePair.objects.filter(predictions__run=run)
        orphans = mine.exclude(Exists(Prediction.objects.filter(pair=OuterRef("pk")).exclude(run=run))).exclude(
            Exists(Label.objects.filter(pair=OuterRef("pk")))).exclude(
            Exists(Adjudication.objects.filter(pair=OuterRef("pk")))).exclude(
            Exists(LabelChange.objects.filter(pair=OuterRef("pk"))))
        orphan_ids = list(orphans.values_list("pk", flat=True))
        kept_ids = list(mine.exclude(pk__in=orphan_ids).values_list("pk", flat=True))
        predictions = run.predictions.count()
        run_pk = run.pk
        CandidatePair.objects.filter(pk__in=orphan_ids).delete()
        run.delete()
        for pair in CandidatePair.objects.filter(pk__in=kept_ids):
            latest = pair.predictions.order_by("-run__created_at", "-id").first()
            if latest is not None and (pair.score, pair.predicted_label) != (latest.score, latest.predicted_label):
                CandidatePair.objects.filter(pk=pair.pk).update(score=latest.score, predicted_label=latest.predicted_label)
        audit.record("run.delete", actor=user, project=run.project, target=f"run #{run_pk}", method=run.method,
                     predictions=predictions, pairs=len(orphan_ids))
    return Deleted(run=run_pk, predictions=predictions, pairs=len(orphan_ids))
