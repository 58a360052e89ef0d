"""Issue 29 §1: one run executor. The same run gives the same pairs and stores the same description
(encoder, parameters, missing features …) whether it runs in one process (``execute_run``, ``align --now``)
or chunked the way workers share it (its chunk task bodies called here, in order)."""
from __future__ import annotations

import pytest

from annotation.models import MINING_METHOD, AlignmentRun, Prediction, Status
from annotation.services.alignment import alignment_runs, run_chunks
from annotation.services.projects.language_tools import BUNDLED_ENCODER
from tests.annotation.services.alignment.test_mining import PARAMS as MINING_PARAMS
from tests.annotation.services.alignment.test_mining import health_and_penguins  # the same two articles
from tests.engine.simplicity._fakes import BagOfWordsEncoder
from tests.engine.test_mining import HashedWords

SERVER_ENCODER = "encoders/server-minilm"  # the server's DEFAULT_ENCODER (jaccard never loads it)
METHODS = {
    "jaccard": ({}, SERVER_ENCODER),
    "crf": ({}, None),  # the untrained neural CRF with the bundled MiniLM
    "wivico": ({"threshold": 0.8}, None),  # a run-level method: one chunk, after its first pass over the run
    MINING_METHOD: (dict(MINING_PARAMS), None),  # a staged job (the mining tests' parameters)
}


@pytest.fixture
def corpus(project):
    health_and_penguins(project)
    return project


@pytest.fixture
def fake_encoders(monkeypatch, settings, tmp_path, method):
    """WIVICO's and the miner's encoder: stand-ins (the CRF keeps the bundled MiniLM)."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.EMBEDDING_CACHE_DIR = tmp_path / "embeddings"
    fake = HashedWords if method == MINING_METHOD else BagOfWordsEncoder
    monkeypatch.setattr("workers.engine.simplicity.embedding.default_encoder", lambda model=None, device=None: fake())


def _pairs(run: AlignmentRun) -> set[tuple]:
    return {(p.pair.complex_document_id, p.pair.simple_document_id, p.pair.complex_key, p.pair.simple_key,
             p.predicted_label, round(p.score, 5)) for p in Prediction.objects.filter(run=run).select_related("pair")}


def _description(run: AlignmentRun) -> dict:
    """What a finished run says about itself, less how its work was cut (chunks) and timed."""
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED, run.error
    return {"result": {k: v for k, v in run.result.items() if k != "chunks"}, "pair_count": run.pair_count,
            "articles": (run.articles_done, run.articles_total), "params": run.params}


def _chunked(run: AlignmentRun, monkeypatch) -> None:
    """The run's task, then each chunk task it sends, in order (as workers would take them)."""
    sent: list = []
    monkeypatch.setattr(run_chunks, "_send", lambda _run, index: sent.append(index))
    run_chunks.plan_run(run.pk)
    while sent:
        run_chunks.run_chunk(run.pk, sent.pop(0))


@pytest.mark.parametrize("method", list(METHODS))
def test_a_run_gives_the_same_pairs_and_description_in_one_process_and_in_chunks(
        corpus, settings, monkeypatch, fake_encoders, method):
    params, server_encoder = METHODS[method]
    settings.DEFAULT_ENCODER = server_encoder
    one_process = alignment_runs.start_run(corpus, method, params=params, enqueue=False)
    alignment_runs.execute_run(one_process.pk)
    settings.RUN_CHUNK_SENTENCES = 1  # a chunk per document pair where the method allows it
    chunked = alignment_runs.start_run(corpus, method, params=params, enqueue=False)
    _chunked(chunked, monkeypatch)

    described = _description(one_process)
    assert _description(chunked) == described
    assert _pairs(chunked) == _pairs(one_process) and _pairs(one_process)
    assert described["result"]["language_tools"]["encoder"] == (server_encoder or BUNDLED_ENCODER)
    if method in ("jaccard", "crf"):
        assert chunked.chunks.count() == 2 and one_process.chunks.count() == 1


def test_whether_a_run_is_shared_is_decided_without_loading_an_aligner(corpus, monkeypatch):
    from annotation.services.alignment import run_setup

    def no_loading(*_a, **_k):
        raise AssertionError("an aligner was loaded to decide")

    monkeypatch.setattr("workers.engine.methods.get_aligner", no_loading)
    monkeypatch.setattr("workers.engine.get_aligner", no_loading)
    shared = {m: run_setup.is_shared(AlignmentRun(project=corpus, method=m)) for m in ("jaccard", "crf", "wivico", MINING_METHOD)}
    assert shared == {"jaccard": True, "crf": True, "wivico": False, MINING_METHOD: False}
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        run_setup.is_shared(AlignmentRun(project=corpus, method="nope"))


def test_skip_articles_is_checked_by_the_option_schema(corpus):
    from annotation.services.alignment.run_options import RunOptionsError

    with pytest.raises(RunOptionsError, match="skip_articles: must be a list of article ids"):
        alignment_runs.start_run(corpus, "jaccard", params={"skip_articles": ["Bees"]}, enqueue=False)
    with pytest.raises(RunOptionsError, match="skip_articles: must be a list, got 3"):
        alignment_runs.start_run(corpus, "jaccard", params={"skip_articles": 3}, enqueue=False)
    skipped = corpus.articles.get(title="Health").pk
    run = alignment_runs.start_run(corpus, "jaccard", params={"skip_articles": [skipped]}, enqueue=False)
    alignment_runs.execute_run(run.pk)
    run.refresh_from_db()
    assert run.articles_total == 1 and skipped not in set(run.predictions.values_list("pair__article_id", flat=True))
