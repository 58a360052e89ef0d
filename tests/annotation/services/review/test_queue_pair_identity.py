"""One item per sentence pair: runs of several methods over the demo project, then the whole queue."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotation.models import CandidatePair, Prediction
from annotation.services.alignment import alignment_runs
from annotation.services.corpus.demo import ensure_demo
from annotation.services.review import queue_progress
from tests import labels


def _run(project, method: str, **params):
    run = alignment_runs.start_run(project, method, params=params, enqueue=False)
    alignment_runs.execute_run(run.pk)
    run.refresh_from_db()
    assert run.status == "succeeded", run.error
    return run


def _walk(user, project) -> list[CandidatePair]:
    served = []
    while (pair := labels.next_item(user, project)) is not None:
        served.append(pair)
        labels.submit(user, project, pair.pk, value="aligned", seconds=1)
        assert len(served) < 10_000
    return served


@pytest.mark.slow
def test_runs_of_two_methods_then_the_whole_queue_serves_no_sentence_pair_twice(db):
    project, _ = ensure_demo()
    project.config = {"qc": {"min_seconds": 0, "test_every": 0}}
    project.save()
    first = _run(project, "crf", access_attributes=False)
    second = _run(project, "tfidf", access_attributes=False)
    again = _run(project, "crf", access_attributes=False)

    shared = Prediction.objects.filter(run=first, pair__in=Prediction.objects.filter(run=second).values("pair"))
    assert shared.exists()  # the two methods agree on some pairs: those must become one item each
    assert again.pair_count == first.pair_count  # a second crf run predicts the same pairs, adds none
    annotator = get_user_model().objects.get(username="annotator")
    served = _walk(annotator, project)

    identities = [(p.complex_document_id, p.simple_document_id, p.complex_key, p.simple_key) for p in served]
    assert len(set(identities)) == len(identities) == len({p.pk for p in served})
    queued = CandidatePair.objects.filter(article__project=project, identical=False)
    assert len(served) == queued.count() == queue_progress.progress(annotator, project).done
    assert queue_progress.progress(annotator, project).remaining == 0
    # identical pairs (the demo's easier versions keep some sentences verbatim) are stored, not queued...
    identical = set(CandidatePair.objects.filter(article__project=project, identical=True).values_list("pk", flat=True))
    assert identical and not identical & {p.pk for p in served}
    # ...unless the project asks for them
    project.config = {**project.config, "queue_identical": True}
    project.save()
    assert {p.pk for p in _walk(annotator, project)} == identical


@pytest.mark.slow
def test_a_new_run_adds_only_pairs_nobody_has_seen_and_its_predictions_on_labelled_pairs_are_kept(db):
    project, _ = ensure_demo()
    project.config = {"qc": {"min_seconds": 0, "test_every": 0}}
    project.save()
    _run(project, "tfidf", access_attributes=False)
    annotator = get_user_model().objects.get(username="annotator")
    labelled = _walk(annotator, project)
    assert labelled
    later = _run(project, "jaccard", access_attributes=False)
    new = _walk(annotator, project)
    assert not {p.pk for p in new} & {p.pk for p in labelled}
    # the jaccard run's predictions of already-labelled pairs are stored for researchers to compare
    assert Prediction.objects.filter(run=later, pair__in=[p.pk for p in labelled]).exists()
