"""``wivico-thresholds`` (``scoring/kinds/wivico.py``): WIVICO's 1:1 cut-off from a wivico run's annotated valid
1:1 pairs, propagated to the n:m configurations over the run's window means and stored for later wivico runs.
The encoder is a table of known vectors (``conftest.wivico_project``), so every cosine is known."""
from __future__ import annotations

import pytest

from annotation.errors import DomainError
from annotation.models import Adjudication, AlignmentRun, CandidatePair, Status
from annotation.services.alignment import run_saving, run_setup
from annotation.services.scoring import jobs as scoring
from annotation.services.scoring.kinds import wivico
from tests import factories
from tests.annotation.services.scoring.helpers import alignment, run_job, start
from workers.engine.types import AlignedPair, Alignment

pytestmark = pytest.mark.django_db

REFUSED = (ValueError, DomainError)  # a refusal inside the job: the job fails with its message


def _more_documents(project, n: int) -> None:
    for k in range(n):
        factories.make_article(project, f"Doc {k + 2}", {"complex": [["A2.", "A4.", "A3."]], "simple": [["B3.", "B2."]]})


def test_the_one_to_one_threshold_is_the_mean_score_of_the_valid_pairs(wivico_project):
    job = run_job(wivico_project, "wivico-thresholds")
    assert job.status == Status.SUCCEEDED, job.error
    assert job.result["threshold"] == pytest.approx(0.8)  # mean of 1.0 and 0.6
    assert job.result["partial_threshold"] == pytest.approx(0.6)
    assert job.result["derived_from"]["valid_pairs"] == 2 and job.result["derived_from"]["partial_pairs"] == 1
    thresholds = job.result["thresholds"]
    assert thresholds["1:1"] == pytest.approx(0.8) and len(thresholds) == 9 and "3:3" in thresholds


def test_propagated_thresholds_follow_the_papers_decreasing_shift(wivico_project):
    from workers.engine.simplicity.wivico_thresholds import propagate_thresholds

    job = run_job(wivico_project, "wivico-thresholds")
    means = {tuple(int(x) for x in k.split(":")): v for k, v in job.result["derived_from"]["config_means"].items()}
    expected = propagate_thresholds(means, 0.8, "paper")
    assert job.result["thresholds"] == {f"{n}:{m}": pytest.approx(v) for (n, m), v in expected.items()}


def test_derived_thresholds_are_stored_for_later_wivico_runs(wivico_project):
    job = run_job(wivico_project, "wivico-thresholds")
    wivico_project.refresh_from_db()
    stored = wivico_project.config["wivico"]
    assert stored["thresholds"] == job.result["thresholds"] and stored["threshold"] == pytest.approx(0.8)
    assert len(stored["thresholds"]) == len(stored["partial_thresholds"]) == 9  # every propagated cut-off
    assert stored["partial_thresholds"]["1:1"] == pytest.approx(0.6)
    assert all(stored["partial_thresholds"][k] <= v for k, v in stored["thresholds"].items())
    defaults = run_setup.project_method_defaults(wivico_project, "wivico", {})
    assert set(defaults) == {"threshold", "partial_threshold", "thresholds", "partial_thresholds", "propagation"}
    from workers.engine.methods.wivico import WivicoAligner

    WivicoAligner(defaults)  # accepted as a run configuration
    assert run_setup.project_method_defaults(wivico_project, "wivico", {"threshold": 0.7}) == {}
    assert run_setup.project_method_defaults(wivico_project, "crf", {}) == {}


def test_the_window_means_cover_every_document_pair_of_the_run_not_the_first_200(wivico_project, monkeypatch):
    _more_documents(wivico_project, 3)
    job = run_job(wivico_project, "wivico-thresholds")
    assert job.result["derived_from"]["document_pairs"] == 4 and not job.result["derived_from"]["capped"]
    # 4 complex × 4 simple 1:1 windows in the first document pair, 3 × 2 in each of the other three
    assert job.result["derived_from"]["windows"]["1:1"] == 16 + 3 * 6
    capped = run_job(wivico_project, "wivico-thresholds", max_document_pairs=1)
    assert capped.result["derived_from"]["document_pairs"] == 1 and capped.result["derived_from"]["capped"]
    assert capped.result["derived_from"]["config_means"] != job.result["derived_from"]["config_means"]


def test_only_annotated_one_to_one_pairs_of_a_wivico_run_set_the_cut_off(wivico_project, users):
    # a 2:1 pair of the wivico run, and a 1:1 pair proposed only by another method, both labelled valid
    wivico_run = wivico_project.runs.get()
    article = wivico_project.articles.get()
    c, s = article.documents.order_by("rank")
    run_saving.save_alignment(wivico_run, article, c, s, Alignment("a", [AlignedPair((2, 3), (3,), "aligned", 0.5)]))
    sbert = AlignmentRun.objects.create(project=wivico_project, method="sbert", status=Status.SUCCEEDED)
    run_saving.save_alignment(sbert, article, c, s, alignment([(3, 0)]))
    for pair in CandidatePair.objects.filter(complex_key__in=["2,3", "3"], simple_key__in=["3", "0"]).exclude(
            complex_key="3", simple_key="3"):
        Adjudication.objects.create(pair=pair, value="valid", provenance=Adjudication.ADJUDICATED)
    job = run_job(wivico_project, "wivico-thresholds")
    assert job.result["threshold"] == pytest.approx(0.8)  # still the mean of A1–B1 (1.0) and A2–B2 (0.6)
    assert job.result["derived_from"]["source_run"] == wivico_run.pk
    with pytest.raises(scoring.ScoringRefused, match="is a sbert run"):
        start(wivico_project, "wivico-thresholds", {"run": sbert.pk})


def test_labelled_pairs_of_other_methods_alone_do_not_make_a_wivico_cut_off(wivico_project):
    wivico_project.runs.update(method="jaccard")
    job = start(wivico_project, "wivico-thresholds", {})
    with pytest.raises(REFUSED, match="of a wivico run counts as valid"):
        scoring.run_scoring_job(job.pk)


def test_without_annotated_valid_pairs_the_job_fails_with_a_reason(wivico_project):
    Adjudication.objects.all().delete()
    job = start(wivico_project, "wivico-thresholds", {})
    with pytest.raises(REFUSED):
        scoring.run_scoring_job(job.pk)
    job.refresh_from_db()
    assert job.status == Status.FAILED and "of a wivico run counts as valid" in job.error


def test_the_source_run_is_the_newest_wivico_run_with_a_valid_one_to_one_pair(wivico_project):
    labelled = wivico_project.runs.get()
    AlignmentRun.objects.create(project=wivico_project, method="wivico", status=Status.SUCCEEDED)  # newer, unlabelled
    assert wivico.wivico_source_run(wivico_project, {}) == labelled
    assert wivico.wivico_source_run(wivico_project, {"run": labelled.pk}) == labelled


def test_a_given_run_of_another_method_is_refused_by_the_check_and_by_the_job(wivico_project):
    sbert = AlignmentRun.objects.create(project=wivico_project, method="sbert", status=Status.SUCCEEDED)
    with pytest.raises(scoring.ScoringRefused) as info:
        wivico.check(wivico_project, {"run": sbert.pk})
    assert info.value.code == "not_a_wivico_run"
    with pytest.raises(REFUSED, match=f"run #{sbert.pk} is a sbert run"):
        wivico.wivico_source_run(wivico_project, {"run": sbert.pk})
    wivico.check(wivico_project, {"run": wivico_project.runs.get(method="wivico").pk})  # a wivico run passes
