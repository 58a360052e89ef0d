"""Saving a run's alignments (``alignment.run_saving``): the one writer of predicted sentence pairs —
idempotent (pairs upserted on their identity, predictions on (run, pair)), keeping others' features and an
annotator's pair, with each pair's uncertainty for the queue's active-learning order."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, CandidatePair, PairSentence, Prediction, Status
from annotation.services.alignment import run_saving
from tests import factories
from workers.engine import AlignedPair, Alignment

pytestmark = pytest.mark.django_db


@pytest.fixture
def docs(project):
    article = factories.make_article(project, "Bees", {"adv": [["Bees are dying.", "Pesticides are blamed."]],
                                                        "int": [["Bees die.", "Pesticides are blamed."]]})
    return (article, *article.documents.order_by("rank"))


def _run(project, method="jaccard") -> AlignmentRun:
    return AlignmentRun.objects.create(project=project, method=method, status=Status.RUNNING)


def _alignment(*pairs) -> Alignment:
    return Alignment("a", [AlignedPair(c, s, label, score, features) for c, s, label, score, features in pairs])


def test_saving_twice_writes_each_pair_and_prediction_once(project, docs):
    run = _run(project)
    alignment = _alignment(((0,), (0,), "aligned", 0.9, {"jaccard": 0.9}), ((1,), (1,), "partial", 0.5, {}))
    assert run_saving.save_alignment(run, *docs, alignment) == 2
    assert run_saving.save_alignment(run, *docs, alignment) == 2  # a re-delivered task
    assert CandidatePair.objects.count() == 2 and Prediction.objects.filter(run=run).count() == 2
    assert PairSentence.objects.count() == 4
    pair = CandidatePair.objects.get(complex_key="0")
    assert (pair.score, pair.predicted_label, pair.origin) == (0.9, "aligned", "model")


def test_a_second_run_reuses_the_pairs_keeps_their_features_and_shows_its_own_score(project, docs):
    run_saving.save_alignment(_run(project), *docs, _alignment(((0,), (0,), "aligned", 0.9, {"jaccard": 0.9})))
    later = _run(project, "tfidf")
    run_saving.save_alignment(later, *docs, _alignment(((0,), (0,), "partial", 0.4, {"tfidf": 0.4})),
                              extra_features=lambda p: {"access_x": 1.0})
    pair = CandidatePair.objects.get()
    assert (pair.score, pair.predicted_label) == (0.4, "partial")
    assert pair.features == {"jaccard": 0.9, "tfidf": 0.4, "access_x": 1.0}
    assert Prediction.objects.filter(pair=pair).count() == 2


def test_an_annotators_pair_becomes_a_model_pair_but_imported_gold_keeps_its_origin(project, docs):
    article, c, s = docs
    manual = factories.make_pair(article=article, complex_document=c, simple_document=s, complex_key="0",
                                 simple_key="0", origin="manual")
    imported = factories.make_pair(article=article, complex_document=c, simple_document=s, complex_key="1",
                                   simple_key="1", origin="import")
    run_saving.save_alignment(_run(project), *docs, _alignment(((0,), (0,), "aligned", 0.9, {}),
                                                              ((1,), (1,), "aligned", 0.8, {})))
    manual.refresh_from_db()
    imported.refresh_from_db()
    assert (manual.origin, imported.origin) == ("model", "import")


def test_uncertainty_is_the_engines_own_or_how_close_the_score_is_to_a_coin_toss():
    assert run_saving.uncertainty_of(AlignedPair((0,), (0,), "aligned", 0.9, {"uncertainty": 0.3})) == 0.3
    assert run_saving.uncertainty_of(AlignedPair((0,), (0,), "aligned", 0.5, {})) == 1.0
    assert run_saving.uncertainty_of(AlignedPair((0,), (0,), "aligned", 1.0, {})) == 0.0
    assert run_saving.uncertainty_of(AlignedPair((0,), (0,), "aligned", 3.5, {})) is None  # not in [0, 1]


def test_with_disagreement_uncertainty_is_the_share_of_other_methods_that_decide_otherwise(project, docs):
    run_saving.save_alignment(_run(project, "tfidf"), *docs, _alignment(((0,), (0,), "not-aligned", 0.1, {})))
    project.config = {"queue_uncertainty": "disagreement"}
    project.save()
    run_saving.save_alignment(_run(project), *docs, _alignment(((0,), (0,), "aligned", 0.9, {}),
                                                              ((1,), (1,), "aligned", 0.9, {})))
    assert dict(CandidatePair.objects.values_list("complex_key", "uncertainty")) == {"0": 1.0, "1": None}


def test_link_sentences_creates_the_missing_rows_only(project, docs):
    article, c, s = docs
    pair = factories.make_pair(article=article, complex_document=c, simple_document=s, complex_key="0,1",
                               simple_key="0", origin="manual")
    run_saving.link_sentences([pair])
    run_saving.link_sentences([pair])
    assert sorted(PairSentence.objects.filter(pair=pair).values_list("side", "sentence__index")) == [
        ("complex", 0), ("complex", 1), ("simple", 0)]
