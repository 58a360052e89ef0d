"""A run's result from its chunks (``alignment.run_result``): progress weighted by sentences and never
backwards, the summary of chunks and workers, and the run finished exactly once when every chunk is done."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, RunChunk, Status
from annotation.services.alignment import run_result

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(project):
    run = AlignmentRun.objects.create(project=project, method="jaccard", status=Status.RUNNING, params={},
                                     articles_total=3)
    for index, (sentences, work) in enumerate(((30, [[1, 2, 3]]), (10, [[1, 4, 5], [1, 5, 6]]))):
        RunChunk.objects.create(run=run, index=index, work=work, sentences=sentences)
    return run


def _chunk(run, index, status, **fields):
    RunChunk.objects.filter(run=run, index=index).update(status=status, **fields)


def test_progress_weighs_chunks_by_their_sentences_and_never_goes_back(run):
    assert run_result.fraction_done(run.pk) == 0.0
    _chunk(run, 1, Status.SUCCEEDED)
    _chunk(run, 0, Status.RUNNING, stats={"progress": 0.5})
    assert run_result.fraction_done(run.pk) == pytest.approx((10 + 15) / 40)
    run_result.moving(run.pk)
    assert AlignmentRun.objects.get(pk=run.pk).progress == 62.5
    _chunk(run, 0, Status.RUNNING, stats={"progress": 0.1})  # a re-run chunk reports less: the bar stays
    run_result.moving(run.pk)
    assert AlignmentRun.objects.get(pk=run.pk).progress == 62.5


def test_the_summary_counts_chunks_pairs_workers_and_the_embedding_cache(run):
    _chunk(run, 0, Status.SUCCEEDED, worker="w1", pair_count=4, stats={"requested": 10, "encoded": 4, "store_hits": 6})
    _chunk(run, 1, Status.FAILED, worker="w2")
    summary = run_result.chunk_summary(run.pk)
    assert (summary["total"], summary["done"], summary["failed"], summary["running"]) == (2, 1, 1, 0)
    assert summary["pairs_written"] == 4 and summary["workers"] == {"w1": 1}
    assert summary["embedding_cache"] == {"requested": 10, "encoded": 4, "store_hits": 6, "hit_rate": 0.6}
    assert run_result.chunk_summary(10 ** 9) == {}


def test_the_run_finishes_once_when_every_chunk_is_done_with_their_stats(run):
    _chunk(run, 0, Status.SUCCEEDED, stats={"seconds": {"align_s": 1.25}, "missing_features": {"access_x": "no"}})
    assert run_result.finish_chunks(run) is False  # a chunk is left
    _chunk(run, 1, Status.SUCCEEDED, stats={"seconds": {"align_s": 0.5}, "run_level": {"threshold": 0.3}})
    assert run_result.finish_chunks(run) is True
    assert run_result.finish_chunks(run) is False  # exactly once
    done = AlignmentRun.objects.get(pk=run.pk)
    assert (done.status, done.progress, done.articles_done) == (Status.SUCCEEDED, 100.0, 3)
    assert done.timings["align_s"] == 1.75 and done.result["document_pairs"] == 3
    assert done.result["missing_features"] == {"access_x": "no"} and done.result["run_level"] == {"threshold": 0.3}
    assert done.result["chunks"]["done"] == 2


def test_report_writes_document_pairs_done_and_the_chunk_count(run):
    _chunk(run, 1, Status.SUCCEEDED)
    run_result.report(run.pk)
    reported = AlignmentRun.objects.get(pk=run.pk)
    assert reported.articles_done == 2 and reported.message.startswith("chunks 1/2 · 2 document pairs")


def test_a_run_without_access_attributes_says_so(run):
    run.params = {"access_attributes": False}
    run.save()
    assert run_result.describe(run, missing={"access_x": "no"})["missing_features"] == run_result.ACCESS_OFF
