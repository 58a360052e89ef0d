"""Deleting a run (``alignment/run_deletion.py``): its predictions go, a pair goes only when this run alone
proposed it and nobody worked on it, and a pair that stays shows its latest remaining prediction."""
from __future__ import annotations

import pytest

from annotation.errors import DomainError
from annotation.models import Adjudication, AlignmentRun, CandidatePair, Label, Prediction, Status
from annotation.services.alignment import run_deletion
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def article(project):
    return factories.make_article(project, "Bees", {"0": [["C0.", "C1.", "C2.", "C3."]], "1": [["S0.", "S1.", "S2.", "S3."]]})


def pair(article, i: int, run, score: float, label: str = "aligned"):
    c, s = article.documents.order_by("rank")
    return factories.make_pair(run, article=article, complex_document=c, simple_document=s, complex_key=str(i),
                               simple_key=str(i), score=score, predicted_label=label)


def test_only_the_pairs_this_run_alone_proposed_and_nobody_worked_on_go(project, users, article):
    older = AlignmentRun.objects.create(project=project, method="jaccard", status=Status.SUCCEEDED)
    run = AlignmentRun.objects.create(project=project, method="sbert", status=Status.SUCCEEDED)
    shared = pair(article, 0, older, 0.3, "not-aligned")
    pair(article, 0, run, 0.9)  # the later run predicts the same pair: it shows 0.9 now
    labelled, adjudicated, alone = (pair(article, i, run, 0.8) for i in (1, 2, 3))
    Label.objects.create(pair=labelled, annotator=users["anna"], value="aligned")
    Adjudication.objects.create(pair=adjudicated, value="partial", provenance=Adjudication.ADJUDICATED)
    assert CandidatePair.objects.get(pk=shared.pk).score == 0.9

    run_pk = run.pk
    deleted = run_deletion.delete_run(run, user=users["rita"])
    assert deleted.as_dict() == {"run": run_pk, "predictions": 4, "pairs": 1}
    assert not AlignmentRun.objects.filter(pk=run_pk).exists() and not Prediction.objects.filter(run_id=run_pk).exists()
    assert set(CandidatePair.objects.values_list("pk", flat=True)) == {shared.pk, labelled.pk, adjudicated.pk}
    assert not CandidatePair.objects.filter(pk=alone.pk).exists()
    shown = CandidatePair.objects.get(pk=shared.pk)
    assert (shown.score, shown.predicted_label) == (0.3, "not-aligned")  # the older run's prediction again
    assert Label.objects.filter(pair=labelled).count() == 1 and Adjudication.objects.filter(pair=adjudicated).exists()


@pytest.mark.parametrize("status", [Status.QUEUED, Status.RUNNING])
def test_a_queued_or_running_run_is_refused_and_nothing_goes(project, article, status):
    run = AlignmentRun.objects.create(project=project, method="jaccard", status=status)
    pair(article, 0, run, 0.5)
    with pytest.raises((ValueError, DomainError), match=f"run #{run.pk} is {status}: cancel it before deleting it"):
        run_deletion.delete_run(run)
    assert AlignmentRun.objects.filter(pk=run.pk).exists() and CandidatePair.objects.count() == 1


@pytest.mark.parametrize("status", [Status.FAILED, Status.CANCELLED])
def test_a_failed_or_cancelled_run_is_deleted_with_what_it_wrote(project, article, status):
    run = AlignmentRun.objects.create(project=project, method="jaccard", status=status)
    pair(article, 0, run, 0.5)
    assert run_deletion.delete_run(run).pairs == 1 and not CandidatePair.objects.exists()
