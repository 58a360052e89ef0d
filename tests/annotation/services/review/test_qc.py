"""Quality control: settings and defaults, minimum time per item, test accuracy, exclusion."""
from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

from annotation.models import Assignment, Label, Membership
from annotation.services.review import qc
from tests import labels
from tests.annotation.services.review.test_queue import build_queue, set_qc


def test_the_defaults_follow_the_crf_papers_procedure():
    config = qc.QcConfig.parse(None)
    assert config.as_dict() == {"overlap": 1, "min_seconds": 10.0, "test_every": 5, "exclusion_threshold": 0.85,
                                "min_test_answers": 5}


def test_settings_come_from_the_projects_qc_object(project):
    project.config = {"qc": {"overlap": 5, "min_seconds": 0}}
    config = qc.qc_config(project)
    assert (config.overlap, config.min_seconds, config.test_every) == (5, 0.0, 5)


@pytest.mark.parametrize("bad,message", [
    ({"overlap": 0}, "overlap: must be >= 1, got 0"),
    ({"overlap": 11}, "overlap: must be <= 10, got 11"),
    ({"overlap": 2.5}, "overlap: must be an int, got 2.5"),
    ({"min_seconds": -1}, "min_seconds: must be >= 0"),
    ({"exclusion_threshold": 1.5}, "exclusion_threshold: must be <= 1, got 1.5"),
    ({"test_every": "5"}, "test_every: must be an int, got '5'"),
    ({"overlapp": 2}, "overlapp: unknown option; valid: overlap (int in [1, 10], default 1), min_seconds"),
])
def test_bad_settings_are_refused_with_the_valid_range(bad, message):
    with pytest.raises(qc.QcConfigError) as exc:
        qc.QcConfig.parse(bad)
    assert message in str(exc.value)
    assert exc.value.status == 400 and set(exc.value.problems) == set(bad)


def test_a_label_faster_than_min_seconds_is_refused_with_a_clear_message(project, users):
    set_qc(project, min_seconds=10)
    work, _ = build_queue(project, 1)
    anna = users["anna"]
    pair = labels.next_item(anna, project)
    with pytest.raises(qc.LabelTooFast, match=r"at least 10 seconds on each item \(this one took 3.0 s\)"):
        labels.submit(anna, project, pair.pk, value="aligned", seconds=3)
    assert not Label.objects.exists()


def test_the_servers_clock_catches_a_client_that_claims_more_time_than_it_took(project, users):
    set_qc(project, min_seconds=10)
    build_queue(project, 1)
    anna = users["anna"]
    pair = labels.next_item(anna, project)
    with pytest.raises(qc.LabelTooFast, match=r"shown \d+\.\d s ago"):
        labels.submit(anna, project, pair.pk, value="aligned", seconds=30)
    Assignment.objects.filter(annotator=anna).update(assigned_at=Assignment.objects.get().assigned_at - timedelta(seconds=12))
    label, created = labels.submit(anna, project, pair.pk, value="aligned", seconds=12)
    assert created and label.seconds == 12


def test_min_seconds_zero_turns_the_check_off(project, users):
    set_qc(project, min_seconds=0)
    build_queue(project, 1)
    pair = labels.next_item(users["anna"], project)
    assert labels.submit(users["anna"], project, pair.pk, value="aligned", seconds=0)[1]


def test_the_same_client_token_twice_stores_one_label(project, users):
    set_qc(project)
    build_queue(project, 2)
    anna = users["anna"]
    pair = labels.next_item(anna, project)
    token = uuid.uuid4()
    first = labels.submit(anna, project, pair.pk, value="aligned", client_token=token)
    again = labels.submit(anna, project, pair.pk, value="aligned", client_token=token)
    assert first[1] is True and again[1] is False and first[0].pk == again[0].pk
    assert Label.objects.count() == 1


def _answer_tests(user, project, answers: list[str]) -> None:
    """Serve ``user`` items until they answered len(answers) test questions with these values."""
    answers = list(answers)
    while answers:
        pair = labels.next_item(user, project)
        assert pair is not None, "ran out of items"
        is_test = Assignment.objects.get(pair=pair, annotator=user).is_test
        labels.submit(user, project, pair.pk, value=answers.pop(0) if is_test else "partial")


def test_test_answers_are_scored_against_the_gold(project, users):
    set_qc(project, test_every=2)
    build_queue(project, 10, gold=4)
    _answer_tests(users["anna"], project, ["aligned", "not-aligned", "aligned"])
    result = qc.test_accuracy(project)[users["anna"].pk]
    assert (result.answers, result.correct) == (3, 2)
    assert result.accuracy == pytest.approx(2 / 3)


def test_an_annotator_below_the_threshold_is_excluded_once_they_answered_enough_tests(project, users):
    set_qc(project, test_every=2, min_test_answers=3, exclusion_threshold=0.85)
    build_queue(project, 20, gold=6)
    anna = users["anna"]
    _answer_tests(anna, project, ["not-aligned", "not-aligned"])
    assert qc.exclusion_reason(anna, project) is None, "too few answers to judge yet"
    _answer_tests(anna, project, ["aligned"])
    reason = qc.exclusion_reason(anna, project)
    assert reason is not None and "33%" in reason and "below the project's 85%" in reason
    with pytest.raises(qc.AnnotatorExcluded):
        labels.next_item(anna, project)
    assert not Assignment.objects.filter(annotator=anna, status=Assignment.OPEN).exists()


def test_an_accurate_annotator_stays(project, users):
    set_qc(project, test_every=2, min_test_answers=3)
    build_queue(project, 20, gold=5)
    _answer_tests(users["anna"], project, ["aligned"] * 4)
    assert qc.exclusion_reason(users["anna"], project) is None


def test_excluded_annotators_cannot_submit_through_the_labels_api_either(project, users):
    set_qc(project)
    work, _ = build_queue(project, 1)
    qc.exclude(users["anna"], project, "removed")
    with pytest.raises(qc.AnnotatorExcluded):
        labels.submit_label(users["anna"], work[0], value="aligned", seconds=20)


def test_reevaluate_applies_new_thresholds_and_reinstate_lifts_an_exclusion(project, users):
    set_qc(project, test_every=2, min_test_answers=2, exclusion_threshold=0.5)
    build_queue(project, 10, gold=4)
    anna = users["anna"]
    _answer_tests(anna, project, ["aligned", "aligned", "partial"])  # 2 of 3
    assert qc.exclusion_reason(anna, project) is None
    set_qc(project, test_every=2, min_test_answers=2, exclusion_threshold=0.9)
    assert qc.reevaluate(project) == [anna.pk]
    assert Membership.objects.get(project=project, user=anna).excluded_at is not None
    qc.reinstate(anna, project)
    assert qc.exclusion_reason(anna, project) is None
