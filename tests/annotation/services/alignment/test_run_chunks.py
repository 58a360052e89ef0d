"""Chunked alignment runs (issue 20): planned into chunks of document pairs, each idempotent, finished once."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import AlignmentRun, Prediction, RunChunk, Status
from annotation.services.alignment import alignment_runs, run_chunks, run_result
from annotation.services.background import jobs, progress
from tests import factories


@pytest.fixture
def corpus(project):
    for title in ("Bees", "Wasps", "Rain", "Snow", "Wind"):
        factories.make_article(project, title, {
            "adv": [[f"{title} populations have declined sharply across Europe.", "Researchers blame pesticides."],
                    ["Farmers are worried about their crops."]],
            "int": [[f"{title} populations have declined across Europe.", "Scientists blame pesticides."],
                    ["Farmers worry about crops."]],
            "ele": [[f"There are fewer {title.lower()} in Europe."], ["Farmers are worried."]],
        })
    return project


def _scored(run) -> dict[tuple, tuple[str, float]]:
    return {(p.pair.complex_document_id, p.pair.simple_document_id, p.pair.complex_key, p.pair.simple_key):
            (p.predicted_label, p.score) for p in Prediction.objects.filter(run=run).select_related("pair")}


def _pairs(run) -> set[tuple]:
    """The run's pairs and labels (scores compared by :func:`_same_scores`, to float tolerance)."""
    return {(*key, label) for key, (label, _) in _scored(run).items()}


def _same_scores(a, b, tolerance: float = 1e-5) -> bool:
    x, y = _scored(a), _scored(b)
    return x.keys() == y.keys() and all(abs(x[k][1] - y[k][1]) <= tolerance for k in x)


def _one_process(project, method):
    run = AlignmentRun.objects.create(project=project, method=method)
    alignment_runs.execute_run(run.pk)
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED, run.error
    return run


@pytest.mark.parametrize("method", ["jaccard", "sbert", "crf"])
def test_a_chunked_run_writes_what_a_one_process_run_writes(corpus, settings, method, tmp_path):
    settings.RUN_CHUNK_SENTENCES = 6  # several chunks of about the same cost
    settings.EMBEDDING_CACHE_DIR = tmp_path / "emb"
    reference = _one_process(corpus, method)
    run = AlignmentRun.objects.create(project=corpus, method=method)
    run_chunks.run_inline(run.pk)
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED, run.error
    chunks = run.result["chunks"]
    assert chunks["total"] == chunks["done"] == RunChunk.objects.filter(run=run).count() > 2
    assert run.articles_done == run.articles_total == 10 and run.pair_count == len(_pairs(reference))
    assert _pairs(run) == _pairs(reference) and _same_scores(run, reference) and chunks["pairs_written"] == run.pair_count
    assert run.timings["write_s"] >= 0 and "align_s" in run.timings
    # encoder methods: the chunk's sentences go through the encoder in one batched call first
    assert (chunks["embedding_cache"]["requested"] > 0) == (method != "jaccard")


def test_a_re_run_of_an_encoder_method_reads_its_embeddings_from_the_cache(corpus, settings, tmp_path):
    from workers.engine import encoders

    settings.EMBEDDING_CACHE_DIR = tmp_path / "emb"
    for enc in list(encoders._LIVE):  # texts another test left in memory would never reach the disk
        enc.clear_cache()
    first = AlignmentRun.objects.create(project=corpus, method="sbert")
    run_chunks.run_inline(first.pk)
    for enc in list(encoders._LIVE):  # a fresh worker: nothing in memory, only the disk cache
        enc.clear_cache()
    second = AlignmentRun.objects.create(project=corpus, method="sbert")
    run_chunks.run_inline(second.pk)
    first.refresh_from_db()
    second.refresh_from_db()
    cache = second.result["chunks"]["embedding_cache"]
    assert cache["encoded"] == 0 and cache["requested"] >= cache["store_hits"] > 0 and cache["hit_rate"] == 1.0
    assert _pairs(first) == _pairs(second)
    assert first.result["chunks"]["embedding_cache"]["encoded"] > 0


def test_a_redelivered_chunk_writes_its_rows_once_and_the_run_finishes_once(corpus, settings):
    settings.RUN_CHUNK_SENTENCES = 6
    run = AlignmentRun.objects.create(project=corpus, method="jaccard")
    sent: list[int] = []
    run_chunks.plan_run(run.pk, send=lambda _r, i: sent.append(i))
    assert sent == list(range(len(sent))) and len(sent) > 2
    run_chunks.run_chunk(run.pk, 0)
    written = Prediction.objects.filter(run=run).count()
    run_chunks.run_chunk(run.pk, 0)  # delivered again: the chunk is done, nothing happens
    assert Prediction.objects.filter(run=run).count() == written
    # a chunk whose worker died mid-way: still RUNNING, silent; the sweep re-queues and re-sends it
    RunChunk.objects.filter(run=run, index=1).update(status=Status.RUNNING, attempts=1,
                                                     heartbeat_at=timezone.now() - timedelta(hours=1))
    resent: list[tuple[int, int]] = []
    from annotation.services.alignment import run_chunks as module
    original = module._send
    module._send = lambda r, i: resent.append((r.pk, i))
    try:
        swept = run_chunks.sweep_lost_chunks()
    finally:
        module._send = original
    assert resent == [(run.pk, 1)] and swept == [f"run #{run.pk} chunk 1"]
    for index in sent[1:]:
        run_chunks.run_chunk(run.pk, index)
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED and not run_chunks.maybe_finish(run.pk)  # finalised exactly once
    assert run.result["chunks"]["done"] == len(sent)


def test_cancel_stops_chunks_not_started_and_retry_runs_only_the_missing_ones(corpus, settings):
    settings.RUN_CHUNK_SENTENCES = 6
    run = AlignmentRun.objects.create(project=corpus, method="jaccard")
    sent: list[int] = []
    run_chunks.plan_run(run.pk, send=lambda _r, i: sent.append(i))
    run_chunks.run_chunk(run.pk, 0)
    progress.cancel(AlignmentRun, run.pk)
    for index in sent[1:]:
        run_chunks.run_chunk(run.pk, index)  # found cancelled: not started
    assert list(RunChunk.objects.filter(run=run, status=Status.SUCCEEDED).values_list("index", flat=True)) == [0]
    assert not RunChunk.objects.filter(run=run, status=Status.RUNNING).exists()
    run.refresh_from_db()
    jobs.retry_run(run)  # on commit: queued; plan again by hand
    resent: list[int] = []
    run_chunks.plan_run(run.pk, send=lambda _r, i: resent.append(i))
    assert resent == sent[1:]
    for index in resent:
        run_chunks.run_chunk(run.pk, index)
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED and run.result["chunks"]["done"] == len(sent)
    assert _pairs(run) == _pairs(_one_process(corpus, "jaccard"))


def test_a_chunk_that_fails_fails_the_run_and_a_retry_resends_it(corpus, settings, monkeypatch):
    settings.RUN_CHUNK_SENTENCES = 6
    run = AlignmentRun.objects.create(project=corpus, method="jaccard")
    sent: list[int] = []
    run_chunks.plan_run(run.pk, send=lambda _r, i: sent.append(i))
    real = run_chunks.align_chunk
    monkeypatch.setattr(run_chunks, "align_chunk", lambda *a: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        run_chunks.run_chunk(run.pk, 1)
    run.refresh_from_db()
    assert run.status == Status.FAILED and "chunk 1: ZeroDivisionError" in run.error
    monkeypatch.setattr(run_chunks, "align_chunk", real)
    jobs.retry_run(run)
    resent: list[int] = []
    run_chunks.plan_run(run.pk, send=lambda _r, i: resent.append(i))
    assert resent == sent
    for index in resent:
        run_chunks.run_chunk(run.pk, index)
    assert AlignmentRun.objects.get(pk=run.pk).status == Status.SUCCEEDED


@pytest.mark.gpu
def test_a_gpu_chunk_batches_the_encoder_over_its_document_pairs_on_cuda(corpus, settings, tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device on this machine (the gpu queue's path is measured on a GPU worker)")
    from workers.engine import get_aligner, prime_encoders
    from workers.engine.encoders import _encoders_of

    aligner = get_aligner("crf", {"similarity": "sbert", "device": "cuda"})
    assert {e.device for e in _encoders_of(aligner)} == {"cuda"} and next(aligner.crf.parameters()).device.type == "cuda"
    assert prime_encoders(aligner, ["A cat sat.", "A dog ran."]) >= 1
    settings.RUN_CHUNK_SENTENCES = 6
    settings.EMBEDDING_CACHE_DIR = tmp_path / "emb"
    reference = _one_process(corpus, "sbert")
    run = AlignmentRun.objects.create(project=corpus, method="sbert")
    run_chunks.run_inline(run.pk)  # encoders resolve to CUDA on this machine
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED and _pairs(run) == _pairs(reference) and _same_scores(run, reference, 1e-4)
    assert run.result["chunks"]["embedding_cache"]["requested"] > 0


def test_the_run_api_and_page_show_chunks_pairs_written_and_workers(corpus, settings, client, django_user_model):
    from rest_framework.test import APIClient

    from annotation.models import Membership

    settings.RUN_CHUNK_SENTENCES = 6
    run = AlignmentRun.objects.create(project=corpus, method="jaccard")
    run_chunks.run_inline(run.pk)
    rita = django_user_model.objects.create_user("rita-chunks", password="x")
    Membership.objects.create(project=corpus, user=rita, role="researcher")
    api = APIClient()
    api.force_authenticate(rita)
    chunks = api.get(f"/api/runs/{run.pk}/").json()["chunks"]
    assert chunks["done"] == chunks["total"] > 2 and chunks["pairs_written"] == run.predictions.count() > 0
    assert list(chunks["workers"].values()) == [chunks["total"]] and chunks["running"] == 0
    client.force_login(rita)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert f'{chunks["total"]}/{chunks["total"]} done' in page and 'id="run-chunk-workers"' in page


def test_the_bar_moves_within_a_chunk_not_only_when_one_finishes(corpus, settings, monkeypatch, tmp_path):
    """Issue 37 (3): a crf run showed 0 % for 33 s, then 50 % (progress per chunk, 2 chunks). Each
    chunk now reports per batch of sentences encoded and per document pair aligned, and the run's bar
    counts the running chunks' fractions (weighted by their sentences), never moving backwards."""
    settings.RUN_CHUNK_SENTENCES = 6
    settings.EMBEDDING_CACHE_DIR = tmp_path / "emb"
    monkeypatch.setattr(run_chunks, "REPORT_EVERY", 0.0)
    seen: list[tuple[float, int]] = []
    real = run_result.moving

    def watching(run_id: int) -> None:
        real(run_id)
        finished = RunChunk.objects.filter(run_id=run_id, status=Status.SUCCEEDED).count()
        seen.append((AlignmentRun.objects.get(pk=run_id).progress, finished))

    monkeypatch.setattr(run_result, "moving", watching)
    run = AlignmentRun.objects.create(project=corpus, method="sbert")
    run_chunks.run_inline(run.pk)
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED and run.progress == 100.0 and RunChunk.objects.filter(run=run).count() > 2
    assert any(bar > 0 and finished == 0 for bar, finished in seen), seen  # the first chunk moved the bar
    assert [bar for bar, _ in seen] == sorted(bar for bar, _ in seen)
    assert RunChunk.objects.filter(run=run, stats__has_key="progress").count() == 0  # replaced by the counters
