"""Alignment runs called directly (no worker): idempotent writes, errors as data, retry."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from annotation.models import AlignmentRun, CandidatePair, PairSentence, Status
from annotation.services.alignment import alignment_runs, run_chunks, run_setup
from annotation.services.background import jobs
from tests import factories


@pytest.fixture
def corpus(project):
    factories.make_article(project, "Bees", {
        "adv": [["Bee populations have declined sharply across Europe.", "Researchers blame pesticides and habitat loss."],
                ["Farmers are worried about their crops."]],
        "int": [["Bee populations have declined across Europe.", "Scientists blame pesticides."],
                ["Farmers worry about crops."]],
        "ele": [["There are fewer bees in Europe."], ["Farmers are worried."]],
    })
    return project


def _run(project, method="jaccard", **kw) -> AlignmentRun:
    return AlignmentRun.objects.create(project=project, method=method, **kw)


def test_a_run_aligns_each_adjacent_pair_of_levels(corpus):
    run = _run(corpus)
    alignment_runs.execute_run(run.pk)
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED and run.articles_total == 2
    levels = set(CandidatePair.objects.filter(predictions__run=run).values_list("complex_document__level", "simple_document__level"))
    assert levels == {("adv", "int"), ("int", "ele")}
    assert run.pair_count == CandidatePair.objects.filter(predictions__run=run).count() > 0


def test_explicit_level_pairs_limit_what_is_aligned(corpus):
    run = _run(corpus, level_pairs=[["adv", "ele"]])
    alignment_runs.execute_run(run.pk)
    levels = set(CandidatePair.objects.filter(predictions__run=run).values_list("complex_document__level", "simple_document__level"))
    assert levels == {("adv", "ele")}


def test_unknown_levels_in_level_pairs_are_refused_with_the_projects_levels(corpus):
    with pytest.raises(ValueError, match=r"unknown level 'elementary' in level_pairs; the project's levels are: "
                                         r"adv, ele, int"):
        alignment_runs.start_run(corpus, "jaccard", level_pairs=[["adv", "elementary"]], enqueue=False)
    with pytest.raises(ValueError, match="aligns a level with itself"):
        alignment_runs.start_run(corpus, "jaccard", level_pairs=[["adv", "adv"]], enqueue=False)
    assert not AlignmentRun.objects.exists()
    run = alignment_runs.start_run(corpus, "jaccard", level_pairs=[["adv", "ele"]], enqueue=False)
    assert run.level_pairs == [["adv", "ele"]]


def test_running_a_run_twice_or_after_a_crash_never_duplicates_pairs(corpus):
    run = _run(corpus)
    alignment_runs.execute_run(run.pk)
    pairs, members = CandidatePair.objects.count(), PairSentence.objects.count()
    # as if the worker died mid-run: still RUNNING, its heartbeat long silent, no checkpoint
    AlignmentRun.objects.filter(pk=run.pk).update(status=Status.RUNNING, checkpoint={},
                                                  heartbeat_at=timezone.now() - timedelta(hours=1))
    alignment_runs.execute_run(run.pk)
    assert (CandidatePair.objects.count(), PairSentence.objects.count()) == (pairs, members)
    run.refresh_from_db()
    assert run.attempts == 2


def test_a_succeeded_run_delivered_again_is_not_redone(corpus):
    run = _run(corpus)
    alignment_runs.execute_run(run.pk)
    finished = AlignmentRun.objects.get(pk=run.pk).finished_at
    alignment_runs.execute_run(run.pk)
    assert AlignmentRun.objects.get(pk=run.pk).finished_at == finished


def test_a_failing_run_records_its_error_and_can_be_retried(corpus):
    run = _run(corpus, method="no-such-method")
    with pytest.raises(ValueError):
        alignment_runs.execute_run(run.pk)
    run.refresh_from_db()
    assert run.status == Status.FAILED and "unknown method 'no-such-method'" in run.error
    run.method = "jaccard"
    run.save()
    jobs.retry_run(run)
    assert AlignmentRun.objects.get(pk=run.pk).status == Status.QUEUED
    alignment_runs.execute_run(run.pk)
    assert AlignmentRun.objects.get(pk=run.pk).status == Status.SUCCEEDED


def test_starting_a_run_rejects_unknown_methods_with_the_valid_ones(corpus):
    with pytest.raises(ValueError, match="choose one of: .*crf.*"):
        alignment_runs.start_run(corpus, "nope")


def test_a_succeeded_run_or_one_with_a_live_worker_is_not_retried(corpus):
    run = _run(corpus)
    alignment_runs.execute_run(run.pk)
    with pytest.raises(ValueError, match="succeeded; start a new one"):
        jobs.retry_run(AlignmentRun.objects.get(pk=run.pk))
    live = _run(corpus, status=Status.RUNNING, worker="w1:42", heartbeat_at=timezone.now())
    with pytest.raises(ValueError, match=r"running on w1:42 \(last heartbeat 0 s ago\); cancel it first"):
        jobs.retry_run(live)
    assert AlignmentRun.objects.get(pk=live.pk).status == Status.RUNNING


def test_thresholds_calibrated_on_a_run_of_the_same_method_are_used_by_the_next_run(corpus):
    first = _run(corpus, method="tfidf")
    alignment_runs.execute_run(first.pk)
    corpus.config = {"thresholds": {"aligned": 0.9, "partial": 0.6, "method": "max-f1", "source_run": first.pk}}
    corpus.save()
    second = _run(corpus, method="tfidf")
    alignment_runs.execute_run(second.pk)
    second.refresh_from_db()
    assert second.result["project_defaults"] == {"aligned_threshold": 0.9, "partial_threshold": 0.6}
    assert all(p.score >= 0.6 for p in CandidatePair.objects.filter(predictions__run=second))
    assert CandidatePair.objects.filter(predictions__run=second).count() < CandidatePair.objects.filter(predictions__run=first).count()


def test_calibrated_thresholds_of_another_method_or_explicit_params_are_not_applied(corpus):
    first = _run(corpus, method="tfidf")
    alignment_runs.execute_run(first.pk)
    corpus.config = {"thresholds": {"aligned": 0.9, "partial": None, "source_run": first.pk}}
    corpus.save()
    assert run_setup.calibrated_defaults(corpus, "jaccard", {}) == {}
    assert run_setup.calibrated_defaults(corpus, "tfidf", {"aligned_threshold": 0.5}) == {}
    # without a partial threshold the method's own cut-off (tf-idf: 0.2) stays
    assert run_setup.calibrated_defaults(corpus, "tfidf", {}) == {"aligned_threshold": 0.9, "partial_threshold": 0.2}


def test_every_pair_a_run_writes_carries_the_access_attributes(corpus):
    run = _run(corpus)
    alignment_runs.execute_run(run.pk)
    pairs = list(CandidatePair.objects.filter(predictions__run=run))
    assert pairs and all({"access_char_ratio", "access_lev_sim", "access_word_rank_ratio"} <= set(p.features) for p in pairs)
    for pair in pairs:
        complex_text = " ".join(m.sentence.text for m in pair.members.filter(side="complex").order_by("sentence__index"))
        simple_text = " ".join(m.sentence.text for m in pair.members.filter(side="simple").order_by("sentence__index"))
        assert pair.features["access_char_ratio"] == pytest.approx(len(simple_text) / len(complex_text))
        assert 0.0 <= pair.features["access_lev_sim"] <= 1.0
    run.refresh_from_db()
    assert "access_dep_depth_ratio" in run.result["access_attributes"]["skipped"]  # no English parser installed


def test_access_attributes_can_be_switched_off_for_a_run(corpus):
    run = _run(corpus, params={"access_attributes": False})
    alignment_runs.execute_run(run.pk)
    assert not any("access_char_ratio" in p.features for p in CandidatePair.objects.filter(predictions__run=run))


def _wivico_run_outcome(project, monkeypatch, chunk_sentences: int) -> tuple[dict, set]:
    from tests.engine.simplicity._fakes import BagOfWordsEncoder

    monkeypatch.setattr("workers.engine.simplicity.embedding.default_encoder",
                        lambda model=None, device=None: BagOfWordsEncoder())
    monkeypatch.setattr(settings, "RUN_CHUNK_SENTENCES", chunk_sentences)
    run = _run(project, method="wivico", params={"threshold": 0.8, "access_attributes": False})
    alignment_runs.execute_run(run.pk)
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED, run.error
    assert run.chunks.count() == 1 and "run_level_s" in run.timings  # one chunk, after its prepare pass
    predictions = {(p.pair.complex_document_id, p.pair.complex_key, p.pair.simple_key, p.predicted_label,
                    round(p.score, 9), p.features["cutoff"]) for p in run.predictions.select_related("pair")}
    return run.result["run_level"], predictions


def test_wivico_cut_offs_are_the_same_whatever_the_chunk_size(corpus, monkeypatch):
    factories.make_article(corpus, "Wasps", {
        "adv": [["Wasps eat many garden pests every summer.", "Gardeners rarely thank them for it."]],
        "ele": [["Wasps eat pests.", "Gardeners do not thank wasps."]],
    })
    factories.make_article(corpus, "Rain", {
        "adv": [["Heavy rain flooded the valley overnight.", "Roads were closed until noon.", "Schools stayed shut."]],
        "ele": [["It rained a lot.", "The roads and schools were closed."]],
    })
    one_by_one = _wivico_run_outcome(corpus, monkeypatch, 1)  # a run-level method is one chunk, however small chunks are
    together = _wivico_run_outcome(corpus, monkeypatch, 1000)
    assert one_by_one[0] == together[0]  # one set of cut-offs per run
    assert one_by_one[1] == together[1] and one_by_one[1]  # and so the same pairs, labels and cut-offs
    assert together[0]["document_pairs"] == 4 and len(together[0]["thresholds"]) == 9


class WorkerKilled(BaseException):
    """Stands for a SIGKILL mid-run: nothing in the run catches it, nothing is marked failed."""


def test_a_run_taken_over_after_its_worker_died_resumes_at_its_first_unfinished_chunk(corpus, settings, monkeypatch):
    from annotation.services.background import progress

    for title in ("Wasps", "Rain"):
        factories.make_article(corpus, title, {"adv": [[f"{title} were seen in the valley overnight.", "Nobody expected it."]],
                                               "ele": [[f"{title} came in the night.", "Nobody expected it."]]})
    settings.RUN_CHUNK_SENTENCES = 11  # two chunks of two document pairs (Bees: 6 + 5 sentences; Wasps, Rain: 4 each)
    clean = _run(corpus)
    alignment_runs.execute_run(clean.pk)
    reference = set(clean.predictions.values_list("pair_id", "predicted_label", "score"))
    real, saved = run_chunks.save_alignments, []

    def dying(run_, items):
        if len(saved) == 2:  # the second chunk (one set-based write per chunk): the worker dies before it
            raise WorkerKilled
        saved.extend(item[1].pk for item in items)
        return real(run_, items)

    monkeypatch.setattr(run_chunks, "save_alignments", dying)
    run = _run(corpus)
    with pytest.raises(WorkerKilled):
        alignment_runs.execute_run(run.pk)
    progress.release(AlignmentRun, run.pk)  # the process is gone: no more heartbeats
    run.refresh_from_db()
    assert (run.status, run.articles_total, run.articles_done) == (Status.RUNNING, 4, 2)
    assert list(run.chunks.order_by("index").values_list("status", flat=True)) == [Status.SUCCEEDED, Status.RUNNING]

    saved.clear()
    alignment_runs.execute_run(run.pk)  # a copy of the task while the heartbeat is fresh: not taken over
    assert not saved and AlignmentRun.objects.get(pk=run.pk).attempts == 1
    stale = timezone.now() - timedelta(seconds=settings.WORKER_STALE_SECONDS + 1)
    AlignmentRun.objects.filter(pk=run.pk).update(heartbeat_at=stale)
    run.chunks.filter(status=Status.RUNNING).update(heartbeat_at=stale)
    alignment_runs.execute_run(run.pk)
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED and run.attempts == 2, run.error
    # only the unfinished chunk ran again
    assert len(saved) == 2 and list(run.chunks.order_by("index").values_list("attempts", flat=True)) == [1, 2]
    assert run.articles_done == run.articles_total == 4 and run.pair_count == len(reference)
    assert set(run.predictions.values_list("pair_id", "predicted_label", "score")) == reference


def test_a_transient_database_error_leaves_the_run_for_its_retry_which_resumes_it(corpus, settings, monkeypatch):
    from django.db import OperationalError

    from annotation.services.background import progress

    factories.make_article(corpus, "Wasps", {"adv": [["Wasps were seen in the valley.", "Nobody expected it."]],
                                             "ele": [["Wasps came.", "Nobody expected it."]]})
    settings.RUN_CHUNK_SENTENCES = 1  # a chunk per document pair
    real, calls = run_chunks.save_alignments, []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise OperationalError("server closed the connection unexpectedly")
        return real(*args, **kwargs)

    monkeypatch.setattr(run_chunks, "save_alignments", flaky)
    run = _run(corpus)
    with pytest.raises(OperationalError):  # re-raised: Celery's autoretry sends the task again
        alignment_runs.execute_run(run.pk)
    run.refresh_from_db()
    assert run.status == Status.RUNNING and run.articles_done == 1 and not run.error
    assert run.message.startswith("interrupted, resumes on retry: server closed the connection")
    assert run.heartbeat_at < progress.stale_before()  # lost at once: the retry need not wait
    alignment_runs.execute_run(run.pk)  # the retry
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED and run.attempts == 2 and len(calls) == 4
    assert list(run.chunks.order_by("index").values_list("attempts", flat=True)) == [1, 2, 1]  # the first chunk kept


def test_any_other_error_fails_the_run_with_it(corpus, monkeypatch):
    monkeypatch.setattr(run_chunks, "save_alignments", lambda *a, **k: 1 / 0)
    run = _run(corpus)
    with pytest.raises(ZeroDivisionError):
        alignment_runs.execute_run(run.pk)
    run.refresh_from_db()
    assert run.status == Status.FAILED and "ZeroDivisionError" in run.error


def test_a_run_counts_the_pairs_written_after_each_chunk_and_reports_one_progress(corpus, settings, monkeypatch):
    """Issue 18 §6: the run's pair count grows chunk by chunk, and the progress runs once over all chunks."""
    from annotation.models import Prediction
    from annotation.services.alignment import run_result

    settings.RUN_CHUNK_SENTENCES = 1
    seen = []
    real_report = run_result.report

    def report(run_id):
        real_report(run_id)
        row = AlignmentRun.objects.get(pk=run_id)
        seen.append((row.pair_count, Prediction.objects.filter(run_id=run_id).count(), row.progress, row.message))

    monkeypatch.setattr(run_result, "report", report)
    run = _run(corpus)
    alignment_runs.execute_run(run.pk)
    after_chunks = seen[1:]  # the first report is the plan's (nothing done yet)
    assert seen[0][:3] == (0, 0, 0.0) and len(after_chunks) == 2
    assert all(shown == written for shown, written, _, _ in after_chunks) and 0 < after_chunks[0][0] < after_chunks[1][0]
    # the bar counts the chunks by their sentences (issue 37: run_result.fraction_done), never backwards
    assert [p for _, _, p, _ in seen] == sorted(p for _, _, p, _ in seen) and 0 < after_chunks[0][2] < after_chunks[1][2]
    assert after_chunks[-1][3] == f"chunks 2/2 · 2 document pairs · {after_chunks[-1][0]} pairs written"
    assert AlignmentRun.objects.get(pk=run.pk).progress == 100.0
