"""The gold label of a pair: one rule (review.gold_rule), read alike by review, export, training,
calibration and the scoring jobs."""
from __future__ import annotations

import pytest

from annotation.label_schemes import value_classes
from annotation.models import Adjudication, CandidatePair
from annotation.services.review import adjudication, gold_reading, gold_rule, qc

from .test_adjudication import crowd, make_pairs, vote  # noqa: F401 - crowd is a fixture

pytestmark = pytest.mark.django_db


@pytest.fixture
def voted(project, crowd):  # noqa: F811 - the imported fixture
    """Five pairs: adjudicated against its votes, a 2:1 majority, a tie, a single vote, no vote."""
    anna, bob, cleo = crowd
    decided, majority, tie, single, unvoted = make_pairs(project, 5)
    Adjudication.objects.create(pair=decided, value="partial", provenance=Adjudication.ADJUDICATED)
    vote(decided, anna, "aligned"), vote(decided, bob, "aligned")
    vote(majority, anna, "aligned"), vote(majority, bob, "aligned"), vote(majority, cleo, "partial")
    vote(tie, anna, "aligned"), vote(tie, bob, "partial")
    vote(single, cleo, "not-aligned")
    return {"decided": decided, "majority": majority, "tie": tie, "single": single, "unvoted": unvoted, "crowd": crowd}


def decided(project, policy):
    return {pid: (g.value, g.provenance, g.stored) for pid, g in gold_reading.pair_gold(
        project, CandidatePair.objects.filter(article__project=project), policy=policy).items()}


def test_stored_gold_wins_and_each_policy_decides_the_rest_from_the_counted_votes(project, voted):
    stored = {voted["decided"].pk: ("partial", "adjudicated", True)}
    majority = {voted["majority"].pk: ("aligned", "majority", False)}
    single = {voted["single"].pk: ("not-aligned", "single", False)}
    assert decided(project, "stored") == stored
    assert decided(project, "majority") == {**stored, **majority}
    assert decided(project, "single") == {**stored, **single}
    assert decided(project, "majority-or-single") == {**stored, **majority, **single}


def test_test_answers_and_excluded_annotators_do_not_vote(project, voted):
    anna, bob, cleo = voted["crowd"]
    vote(voted["unvoted"], anna, "aligned", test=True)
    qc.exclude(cleo, project, "low accuracy")  # her "partial" on the majority pair and her single vote go
    result = decided(project, "majority-or-single")
    assert voted["unvoted"].pk not in result and voted["single"].pk not in result
    assert result[voted["majority"].pk] == ("aligned", "majority", False)


def test_an_unknown_policy_is_refused_with_the_valid_ones():
    with pytest.raises(ValueError, match="stored, majority, single, majority-or-single"):
        gold_rule.resolve(None, ["aligned"], "most")


def test_review_export_training_calibration_and_scoring_read_the_same_gold(project, voted):
    from annotation.services.scoring import calibration, common
    from annotation.services.training import dataset

    pairs = CandidatePair.objects.filter(article__project=project)
    classes = gold_reading.pair_classes(project, pairs)
    assert classes == {voted["decided"].pk: "partial", voted["majority"].pk: "aligned", voted["single"].pk: "not"}
    assert dataset.resolved_labels(project, pairs) == classes
    assert common.annotated_classes(project, pairs) == classes
    calibrated = sorted(value for _, value, _ in calibration.labelled_scores(project, None))
    assert calibrated == ["aligned", "not-aligned", "partial"]  # every scored pair with gold, and only those
    counts_as = value_classes(project.label_scheme)
    assert {pid: counts_as[g.value] for pid, g in gold_reading.pair_gold(project, pairs).items()} == classes
    adjudication.auto_gold(project, "majority")
    adjudication.auto_gold(project, "single")
    written = dict(Adjudication.objects.filter(pair__in=pairs).values_list("pair_id", "value"))
    assert {pid: g.value for pid, g in gold_reading.pair_gold(project, pairs, policy="stored").items()} == written
    assert {pid: counts_as[v] for pid, v in written.items()} == classes
