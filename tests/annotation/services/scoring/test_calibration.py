"""Calibration: score distributions per human label and thresholds (mean of valid, max F1)."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, Membership, Project, Status
from annotation.services.alignment import run_setup
from annotation.services.review import adjudication
from annotation.services.scoring import calibration
from tests import factories
from tests.annotation.services.review.test_adjudication import make_pairs, vote

SCORES = [0.92, 0.85, 0.78, 0.60, 0.55, 0.30, 0.20, 0.45]
LABELS = ["aligned", "aligned", "aligned", "partial", "partial", "not-aligned", "not-aligned", "aligned"]


MEANS = {"1:1": 0.30, "1:2": 0.32, "2:1": 0.31, "1:3": 0.33, "2:2": 0.36, "3:1": 0.32, "2:3": 0.38, "3:2": 0.37,
         "3:3": 0.40}


@pytest.fixture
def labelled(project, users):
    """Eight 1:1 pairs of one wivico run (whose window means over all its document pairs are
    recorded), each with anna's vote; the last is adjudicated (overriding her vote)."""
    run = AlignmentRun.objects.create(project=project, method="wivico", status=Status.SUCCEEDED,
                                      result={"run_level": {"config_means": MEANS, "document_pairs": 1}})
    pairs = make_pairs(project, len(SCORES), scores=SCORES, run=run)
    for pair, value in zip(pairs, LABELS):
        vote(pair, users["anna"], value if pair is not pairs[-1] else "not-aligned")
    adjudication.decide(pairs[-1], "aligned", users["rita"])
    return pairs


def test_the_distribution_groups_scores_by_gold_or_majority_label_in_scheme_order(project, labelled):
    result = calibration.score_distribution(project)
    assert result["run"] == labelled[0].predictions.get().run_id and result["pairs"] == 8
    groups = {g["value"]: g for g in result["groups"]}
    assert [g["value"] for g in result["groups"]] == ["aligned", "partial", "not-aligned"]
    assert groups["aligned"]["n"] == 4  # the adjudicated pair counts as aligned, not as anna's not-aligned
    assert groups["aligned"]["stats"]["mean"] == pytest.approx((0.92 + 0.85 + 0.78 + 0.45) / 4)
    assert groups["not-aligned"]["stats"]["median"] == pytest.approx(0.25)


def test_mean_valid_is_the_mean_score_of_the_pairs_counting_as_aligned(project, labelled):
    stored = calibration.calibrate(project, "mean-valid")
    assert stored["aligned"] == pytest.approx(0.75)  # (0.92 + 0.85 + 0.78 + 0.45) / 4
    assert stored["partial"] == pytest.approx(0.575)
    assert stored["pairs"] == {"aligned": 4, "partial": 2, "not": 2}
    project.refresh_from_db()
    assert project.config["thresholds"]["aligned"] == pytest.approx(0.75)
    assert project.config["thresholds"]["source_run"] == labelled[0].predictions.get().run_id
    assert project.config["wivico"]["threshold"] == pytest.approx(0.75)


def test_mean_valid_stores_all_nine_cut_offs_propagated_over_the_runs_window_means(project, labelled):
    from workers.engine.simplicity.wivico_thresholds import propagate_thresholds

    project.config = {"wivico": {"threshold": 0.81, "thresholds": {"1:1": 0.81, "1:2": 0.7}, "propagation": "offset"}}
    project.save()
    calibration.calibrate(project, "mean-valid")
    project.refresh_from_db()
    wivico = project.config["wivico"]
    means = {tuple(int(x) for x in k.split(":")): v for k, v in MEANS.items()}
    assert wivico["propagation"] == "offset"
    assert wivico["thresholds"] == {f"{n}:{m}": pytest.approx(v)
                                    for (n, m), v in propagate_thresholds(means, 0.75, "offset").items()}
    assert len(wivico["partial_thresholds"]) == 9 and wivico["partial_thresholds"]["1:1"] == pytest.approx(0.575)
    defaults = run_setup.project_method_defaults(project, "wivico", {})
    assert defaults["threshold"] == pytest.approx(0.75) and defaults["partial_threshold"] == pytest.approx(0.575)
    assert defaults["thresholds"] == wivico["thresholds"]
    from workers.engine.methods.wivico import WivicoAligner

    WivicoAligner(defaults)  # a valid run configuration


def test_a_wivico_run_without_recorded_window_means_leaves_the_propagation_to_the_next_run(project, labelled):
    AlignmentRun.objects.filter(method="wivico").update(result={})
    project.config = {"wivico": {"threshold": 0.81, "thresholds": {"1:1": 0.81, "1:2": 0.7}}}
    project.save()
    calibration.calibrate(project, "mean-valid")
    project.refresh_from_db()
    assert "thresholds" not in project.config["wivico"]
    assert "at the next wivico run" in project.config["wivico"]["derived_from"]["propagated"]


def test_wivicos_rule_is_refused_for_a_run_of_another_method(project, users):
    pairs = make_pairs(project, 3, scores=[0.9, 0.7, 0.1])  # a jaccard run: word overlaps, not SBERT cosines
    for pair, value in zip(pairs, ["aligned", "aligned", "not-aligned"]):
        vote(pair, users["anna"], value)
    with pytest.raises(calibration.CalibrationError, match="WIVICO's rule is for wivico runs .*jaccard"):
        calibration.calibrate(project, "mean-valid")
    distribution = calibration.score_distribution(project)
    assert distribution["suggested"]["mean-valid"] is None and distribution["suggested"]["max-f1"] is not None
    assert distribution["wivico_rule"]["available"] is False and "jaccard" in distribution["wivico_rule"]["reason"]
    project.refresh_from_db()
    assert "wivico" not in (project.config or {})
    assert calibration.calibrate(project, "max-f1")["aligned"] == pytest.approx(0.7)  # max-f1 stays available


def test_wivicos_rule_reads_only_the_runs_one_to_one_pairs(project, labelled, users):
    from annotation.models import CandidatePair
    from annotation.services.alignment.run_saving import save_alignment
    from workers.engine.types import AlignedPair, Alignment

    run = labelled[0].predictions.get().run
    article = labelled[0].article
    c, s = article.documents.order_by("rank")
    save_alignment(run, article, c, s, Alignment("a", [AlignedPair((0, 1), (0,), "aligned", 0.1)]))
    vote(CandidatePair.objects.get(complex_key="0,1"), users["anna"], "aligned")
    assert calibration.score_distribution(project)["pairs"] == 9  # the box plot shows every labelled pair
    assert calibration.score_distribution(project)["wivico_rule"]["one_to_one_pairs"] == 8
    assert calibration.calibrate(project, "mean-valid")["aligned"] == pytest.approx(0.75)  # the 2:1 pair is left out


def test_max_f1_finds_the_cut_that_best_separates_the_human_labels(project, labelled):
    stored = calibration.calibrate(project, "max-f1")
    # aligned vs rest: cutting at 0.78 predicts 3 aligned, all right; 0.45 would add two partials
    assert stored["aligned"] == pytest.approx(0.78)
    assert stored["f1"]["aligned"]["precision"] == 1.0
    # aligned + partial vs not: everything from 0.45 up is positive, the two not-aligned pairs are below
    assert stored["partial"] == pytest.approx(0.45)
    assert stored["f1"]["aligned+partial"]["f1"] == 1.0
    project.refresh_from_db()
    assert project.config["thresholds"]["method"] == "max-f1" and "wivico" not in project.config


def test_both_methods_are_suggested_with_the_distribution(project, labelled):
    suggested = calibration.score_distribution(project)["suggested"]
    assert suggested["mean-valid"]["aligned"] == pytest.approx(0.75)
    assert suggested["max-f1"]["aligned"] == pytest.approx(0.78)


def test_calibration_without_aligned_pairs_says_what_is_missing(project, users):
    [pair] = make_pairs(project, 1)
    vote(pair, users["anna"], "not-aligned")
    AlignmentRun.objects.filter(project=project).update(method="wivico")
    with pytest.raises(calibration.CalibrationError, match="counts as aligned"):
        calibration.calibrate(project, "mean-valid")
    assert calibration.score_distribution(project)["suggested"] == {"mean-valid": None, "max-f1": None}


def test_the_default_run_is_the_newest_with_labelled_pairs_and_another_projects_run_is_refused(project, labelled):
    AlignmentRun.objects.create(project=project, method="sbert", status=Status.RUNNING)  # newer, nothing labelled
    assert calibration.default_run(project) == labelled[0].predictions.get().run_id
    other = Project.objects.get(name="Other")
    foreign = AlignmentRun.objects.create(project=other, method="sbert", status=Status.SUCCEEDED)
    with pytest.raises(calibration.CalibrationError, match="not a run of this project"):
        calibration.calibrate(project, "mean-valid", run=foreign.pk)


def test_scores_of_another_run_are_kept_apart(project, labelled, users):
    newer = AlignmentRun.objects.create(project=project, method="sbert", status=Status.SUCCEEDED)
    bob = factories.make_user("bob")
    Membership.objects.create(project=project, user=bob, role="annotator")
    [pair] = make_pairs(project, 1, scores=[0.99], run=newer, title="Newer article")
    vote(pair, bob, "aligned")
    assert calibration.score_distribution(project)["run"] == newer.pk
    assert calibration.score_distribution(project, labelled[0].predictions.get().run_id)["pairs"] == 8


def test_box_stats_use_tukey_whiskers():
    stats = calibration.box_stats([0.1, 0.2, 0.3, 0.4, 2.0])
    assert (stats["q1"], stats["median"], stats["q3"]) == (0.2, 0.3, 0.4)
    assert stats["whiskerMax"] == 0.4 and stats["outliers"] == [2.0] and stats["max"] == 2.0
    assert calibration.box_stats([]) is None
