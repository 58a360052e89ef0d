"""A run's scores against exhaustive gold (issue 28 §3), checked against values computed by hand
(``scores_data.py``): implied not-aligned pairs count, identical pairs are left out as the engine's
evaluate does, the number of articles and the model metrics' "too few to trust" rule, which document
pairs a run is scored on, and a query count that does not grow with the run."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import AlignmentRun, RunChunk
from annotation.services.training import dataset
from annotation.services.training.run_scores import run_scores
from tests.annotation.services.training.scores_data import TASK1, TASK2, add_run, scored_project

pytestmark = pytest.mark.django_db


def close(found: dict, expected: dict) -> bool:
    return found.keys() == expected.keys() and all(found[k] == pytest.approx(v) for k, v in expected.items())


def test_a_run_is_scored_on_task_1_and_task_2_over_the_exhaustive_articles(project, users):
    made = scored_project(project, users["anna"])
    scores = run_scores(made["run"])
    assert scores["available"] and scores["reason"] is None
    assert close(scores["task1"], TASK1), scores["task1"]  # the false positive (1,0) in Bees counts
    assert close(scores["task2"], TASK2), scores["task2"]
    assert (scores["n_articles"], scores["n_document_pairs"], scores["document_pairs_left_out"]) == (2, 2, 0)
    assert scores["gold"] == {"imported": 1, "completed": 1}
    assert scores["identical_left_out"] == {"gold": 1, "predicted": 1}  # Bees (0,0): "Bees make honey." twice
    assert scores["too_few"] and scores["min_articles"] == 5
    assert scores["warnings"] == ["measured on 2 articles with exhaustive gold: too few to trust (fewer than 5)"]
    assert "false positive" in scores["over"] and "identical" in scores["identical"]


def test_enough_articles_are_trusted_by_the_same_setting_as_model_metrics(project, users, settings):
    settings.MODEL_MIN_TEST_ARTICLES = 2
    scores = run_scores(scored_project(project, users["anna"])["run"])
    assert not scores["too_few"] and scores["warnings"] == [] and scores["min_articles"] == 2


def test_an_unfinished_run_is_scored_only_where_it_aligned(project, users):
    made = scored_project(project, users["anna"], status="cancelled")
    _, c, s = made["owls"]
    made["run"].predictions.filter(pair__complex_document=c).delete()  # it stopped before Owls
    scores = run_scores(made["run"])
    assert (scores["n_articles"], scores["document_pairs_left_out"]) == (1, 1)
    assert (scores["task1"]["tp"], scores["task1"]["n_pred"], scores["task1"]["n_gold"]) == (2, 3, 2)
    RunChunk.objects.create(run=made["run"], index=0, status="succeeded", work=[[made["owls"][0].pk, c.pk, s.pk]])
    scores = run_scores(made["run"])  # a finished chunk that linked nothing there: every gold link missed
    assert (scores["n_articles"], scores["task1"]["n_gold"], scores["task1"]["tp"]) == (2, 4, 2)


def test_a_succeeded_run_that_linked_nothing_in_an_exhaustive_article_misses_its_gold(project, users):
    made = scored_project(project, users["anna"])
    _, c, _ = made["owls"]
    made["run"].predictions.filter(pair__complex_document=c).delete()
    scores = run_scores(made["run"])
    assert (scores["n_articles"], scores["task1"]["n_gold"], scores["task1"]["n_pred"]) == (2, 4, 3)
    skipped = AlignmentRun.objects.create(project=project, method="jaccard", status="succeeded",
                                          params={"skip_articles": [made["owls"][0].pk]})
    assert run_scores(skipped)["n_articles"] == 1 and run_scores(skipped)["document_pairs_left_out"] == 1


def test_without_exhaustive_gold_there_is_no_score_and_the_reason_says_why(project, users):
    run = AlignmentRun.objects.create(project=project, method="jaccard", status="succeeded")
    scores = run_scores(run)
    assert not scores["available"] and scores["task1"] is None and scores["n_articles"] == 0
    assert "no exhaustive gold" in scores["reason"] and "complete" in scores["reason"]


def test_the_gold_is_the_one_training_and_model_metrics_use(project, users):
    made = scored_project(project, users["anna"])
    exhaustive = dataset.exhaustive_pairs(project)
    links = dataset.exhaustive_links(project, exhaustive)
    (_, bc, bs), (_, oc, os_) = made["bees"], made["owls"]
    assert links == {(bc.pk, bs.pk): {(0, 0): "aligned", (1, 1): "aligned", (2, 2): "partial"},
                     (oc.pk, os_.pk): {(0, 0): "aligned", (1, 1): "partial"}}


def test_the_number_of_queries_does_not_grow_with_the_run_or_the_articles(project, users):
    made = scored_project(project, users["anna"])
    from annotation.services.training.run_scores import compute_run_scores

    with CaptureQueriesContext(connection) as small:  # the computation (run_scores adds the cache's marks)
        compute_run_scores(made["run"])
    more = scored_project(project, users["anna"], suffix=" 2")  # twice the articles, gold and predictions
    add_run(made["run"], bees=more["bees"], owls=more["owls"], cats=more["cats"])
    with CaptureQueriesContext(connection) as big:
        scores = compute_run_scores(made["run"])
    assert scores["n_articles"] == 4 and scores["task1"]["tp"] == 8
    assert len(big.captured_queries) == len(small.captured_queries) <= 15


def test_a_finished_runs_scores_are_kept_until_the_gold_changes(project, users, settings):
    """Issue 37: the run page, its API and the comparison read the scores on every view (seconds at 1M pairs)."""
    from annotation.models import Label
    from annotation.services.training.run_scores import compute_run_scores

    made = scored_project(project, users["anna"])
    first = run_scores(made["run"])
    assert first == compute_run_scores(made["run"])
    with CaptureQueriesContext(connection) as again:
        assert run_scores(made["run"]) == first
    assert len(again.captured_queries) <= 14  # the marks of the state and of the run, no computation
    Label.objects.filter(pair__article__project=project).delete()  # the completers' links: the gold changes
    changed = run_scores(made["run"])
    assert changed == compute_run_scores(made["run"]) and changed != first
    settings.MODEL_MIN_TEST_ARTICLES = 2
    assert run_scores(made["run"])["min_articles"] == 2


def test_a_restarted_server_reads_a_finished_runs_kept_scores_without_computing_them(project, users):
    from django.core.cache import cache

    made = scored_project(project, users["anna"])
    first = run_scores(made["run"])
    cache.clear()  # a freshly started web process
    with CaptureQueriesContext(connection) as again:
        assert run_scores(made["run"]) == first
    assert len(again.captured_queries) <= 15  # the marks and the kept row, no computation


def test_a_big_projects_run_page_shows_the_kept_scores_as_of_their_time_while_one_job_computes_anew(
        project, users, monkeypatch):
    """Issue 37: after a change the page answers at once with the scores of the state before, marked updating,
    and the ``run-scores`` job it started (one, however often the page is read) keeps the new ones."""
    from annotation.models import Job, Label, Status
    from annotation.services.review import review_state
    from annotation.services.training.run_scores import SCORES_JOB, compute_run_scores, page_scores, run_scores_job

    monkeypatch.setattr(review_state, "LAZY_ARTICLES", 1)
    made = scored_project(project, users["anna"])
    for _ in range(2):  # nothing kept yet: nothing computed while it answers, one job started
        computing = page_scores(made["run"])
        assert computing["computing"]["kind"] == SCORES_JOB and "task1" not in computing
    (job,) = Job.objects.filter(project=project, kind=SCORES_JOB)
    run_scores_job(job.pk)
    job.delete()  # long done (the next job is not held back by it)
    first = page_scores(made["run"])
    assert not first["updating"] and first["as_of"] and first["computing"] is None
    Label.objects.filter(pair__article__project=project).delete()  # the completers' links: the gold changes
    for _ in range(2):
        stale = page_scores(made["run"])
        assert stale["updating"] and stale["as_of"] == first["as_of"] and stale["task1"] == first["task1"]
    jobs = list(Job.objects.filter(project=project, kind=SCORES_JOB))
    assert len(jobs) == 1 and jobs[0].params == {"run": made["run"].pk} and jobs[0].status == Status.QUEUED
    run_scores_job(jobs[0].pk)
    now = page_scores(made["run"])
    assert not now["updating"] and now["as_of"] != first["as_of"]
    assert {k: v for k, v in now.items() if k not in ("as_of", "updating", "computing")} == compute_run_scores(made["run"])
    assert now["task1"] != first["task1"]
