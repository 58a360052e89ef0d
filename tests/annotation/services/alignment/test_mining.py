"""Mining runs (``muss-corpus``) on the one executor, driven chunk by chunk the way workers run them: every
task body is called in the order the chunks are queued; duplicates, a lost message, a failure, a retry."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, CandidatePair, Prediction, RunChunk, Status
from annotation.services.alignment import alignment_runs, mining, run_chunks, run_options
from annotation.services.background import jobs, progress, registry
from annotation.services.review.queue_serving import queue_pairs
from tests import factories
from tests.engine.test_mining import HashedWords
from workers.tasks import TASKS

run_alignment = TASKS[registry.RUN.task]
align_chunk = TASKS[registry.RUN_CHUNK.task]
PARAMS = {"max_distance": 1.5, "max_relative": 0.95, "k": 4, "shard_size": 4}


def health_and_penguins(project) -> None:
    """Two articles of two levels each, on unrelated subjects (the smallest corpus a run has pairs in)."""
    factories.make_article(project, "Health", {
        "adv": [["The government announced sweeping reforms to the national health service yesterday.",
                 "Ministers insisted that waiting lists would fall within two years."]],
        "ele": [["The government said it will change the health service.",
                 "Ministers said waiting lists will be shorter in two years."]],
    })
    factories.make_article(project, "Penguins", {
        "adv": [["Emperor penguins huddle together to survive the bitter Antarctic winter.",
                 "Males incubate the eggs on their feet for two months."]],
        "ele": [["Penguins stand close together to stay warm in winter.", "The fathers keep the eggs on their feet."]],
    })


@pytest.fixture
def corpus(project):
    health_and_penguins(project)
    # a document of no article related to the others, saying what one of them says
    factories.make_article(project, "Hospital waits", {
        "report": [["Officials promised that hospital waiting lists would fall within two years."]],
    })
    return project


@pytest.fixture
def broker(monkeypatch, settings, tmp_path):
    """Chunks are queued into a list (the test delivers them) and embedded by a stand-in encoder."""
    settings.MEDIA_ROOT = str(tmp_path)
    monkeypatch.setattr("workers.engine.simplicity.embedding.default_encoder",
                        lambda model=None, device=None: HashedWords())
    queued: list[tuple[str, int]] = []

    def send(run, index: int) -> None:
        queued.append((mining.stage_of(run, index)[0], index))

    monkeypatch.setattr(run_chunks, "_send", send)
    return queued


def deliver(run_id: int, queued: list, *, twice: bool = False, limit: int | None = None) -> list[tuple[str, int]]:
    """Run queued chunk tasks in order (each twice: an ``acks_late`` re-delivery); returns them."""
    done = []
    while queued and (limit is None or len(done) < limit):
        stage, index = queued.pop(0)
        for _ in range(2 if twice else 1):
            align_chunk(run_id, index)
        done.append((stage, index))
    return done


def start(project, **params) -> AlignmentRun:
    return alignment_runs.start_run(project, "muss-corpus", params={**PARAMS, **params}, enqueue=False)


def test_a_mining_run_plans_then_runs_its_chunks_stage_by_stage(corpus, broker):
    run = start(corpus)
    run_alignment(run.pk)  # the plan
    work = mining.MiningWork(mining.folder_of(run))
    assert broker == [("encode", c) for c in range(work.n_shards)] and work.n_shards > 1
    run.refresh_from_db()
    assert run.chunks.count() == 3 * work.n_shards + 2 and run.checkpoint["chunks"] == run.chunks.count()
    ran = deliver(run.pk, broker)
    stages = [s for s, _ in ran]
    assert stages == sorted(stages, key=mining.RUN_STAGES.index)  # each stage after the one before
    assert stages.count("index") == stages.count("merge") == 1 and stages.count("search") == work.n_shards
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED, run.error
    assert run.progress == 100.0 and run.articles_total == run.articles_done == 5
    assert run.result["mined_pairs"] == run.pair_count == Prediction.objects.filter(run=run).count() > 0
    assert set(run.timings) >= {"plan_s", "encode_s", "index_s", "search_s", "merge_s", "save_s", "total_s"}
    assert run.result["index"] == "IndexFlatIP" and run.result["stages"]["encode"]["chunks"] == work.n_shards
    assert run.result["chunks"]["done"] == run.result["chunks"]["total"] == run.chunks.count()
    assert not list(work.folder.glob("vectors/*.npy"))  # embeddings dropped once saved
    assert run.result["language_tools"]["encoder"] == "all-MiniLM-L6-v2 (bundled)"


def test_the_projects_encoder_embeds_the_sequences(corpus, broker, monkeypatch, settings, tmp_path):
    settings.MODEL_ROOTS = [str(tmp_path)]
    french = f"{tmp_path}/french-sbert"
    corpus.config = {**(corpus.config or {}), "encoder": french}
    corpus.save(update_fields=["config"])
    asked = []

    def encoder(model=None, device=None):
        asked.append(model)
        return HashedWords()

    monkeypatch.setattr("workers.engine.simplicity.embedding.default_encoder", encoder)
    run = start(corpus)
    run_alignment(run.pk)
    deliver(run.pk, broker)
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED and set(asked) == {french}
    assert run.result["language_tools"]["encoder"] == french


def test_mined_pairs_are_sentence_pairs_in_the_queue_across_levels_and_articles(corpus, broker):
    run = start(corpus)
    run_alignment(run.pk)
    deliver(run.pk, broker)
    pairs = CandidatePair.objects.filter(predictions__run=run).select_related("article", "complex_document__article",
                                                                               "simple_document__article")
    assert pairs and set(queue_pairs(corpus).filter(pk__in=pairs)) == set(pairs)
    for pair in pairs:
        assert pair.article == pair.complex_document.article and pair.predicted_label == "aligned"
        assert pair.features["fres_simple"] >= pair.features["fres_complex"] and pair.features["mined"] == 1.0
        assert "access_char_ratio" in pair.features  # ACCESS attributes, as for every run's pairs
    health = [p for p in pairs if p.complex_document.article.title == p.simple_document.article.title == "Health"]
    assert health and all(p.simple_document.level == "ele" for p in health)
    across = [p for p in pairs if p.complex_document.article_id != p.simple_document.article_id]
    assert any("Hospital waits" in (p.complex_document.article.title, p.simple_document.article.title) for p in across)


def test_re_delivered_chunks_change_nothing_and_a_second_run_reuses_the_pairs(corpus, broker):
    run = start(corpus)
    run_alignment(run.pk)
    deliver(run.pk, broker, twice=True)  # every chunk delivered twice: skipped, and starts no stage twice
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED, run.error
    pairs = CandidatePair.objects.count()
    assert Prediction.objects.filter(run=run).count() == run.pair_count
    for index in range(run.chunks.count()):  # a late delivery after the run finished is dropped
        align_chunk(run.pk, index)
    assert broker == [] and CandidatePair.objects.count() == pairs
    second = start(corpus)
    run_alignment(second.pk)
    deliver(second.pk, broker)
    second.refresh_from_db()
    assert second.pair_count == run.pair_count and CandidatePair.objects.count() == pairs  # upserted, not duplicated


def test_a_run_whose_worker_died_resumes_from_the_chunks_it_had_finished(corpus, broker):
    run = start(corpus, keep_files=True)
    run_alignment(run.pk)
    work = mining.MiningWork(mining.folder_of(run))
    deliver(run.pk, broker, limit=2)  # two encode shards done, then the worker dies ...
    broker.clear()                     # ... and the broker lost the remaining messages
    stamps = {c: work.output("encode", c).stat().st_mtime_ns for c in (0, 1)}
    assert AlignmentRun.objects.get(pk=run.pk).status == Status.RUNNING
    jobs.retry_run(AlignmentRun.objects.get(pk=run.pk))  # a stalled chunked run may be resumed while RUNNING
    run_alignment(run.pk)                           # the plan task, as the broker delivers it
    assert broker == [("encode", c) for c in range(2, work.n_shards)]
    deliver(run.pk, broker)
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED and run.attempts == 2
    assert {c: work.output("encode", c).stat().st_mtime_ns for c in (0, 1)} == stamps  # not encoded again
    assert run.pair_count == run.result["mined_pairs"] > 0


def test_a_failed_chunk_fails_the_run_and_a_retry_goes_on_from_there(corpus, broker, monkeypatch):
    run = start(corpus)
    run_alignment(run.pk)
    deliver(run.pk, broker, limit=1)

    class Broken:
        def encode(self, texts):
            raise RuntimeError("the encoder broke")

    monkeypatch.setattr("workers.engine.simplicity.embedding.default_encoder", lambda model=None, device=None: Broken())
    with pytest.raises(RuntimeError):
        deliver(run.pk, broker, limit=1)
    run.refresh_from_db()
    assert run.status == Status.FAILED and "the encoder broke" in run.error
    deliver(run.pk, broker)  # the rest of the queued chunks: the run failed, they do nothing
    monkeypatch.setattr("workers.engine.simplicity.embedding.default_encoder", lambda model=None, device=None: HashedWords())
    assert RunChunk.objects.get(run=run, index=1).status == Status.FAILED
    jobs.retry_run(run)
    run_alignment(run.pk)
    assert broker and all(stage == "encode" for stage, _ in broker) and ("encode", 0) not in broker
    deliver(run.pk, broker)
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED and run.pair_count > 0


def test_a_cancelled_run_stops_at_its_next_chunk(corpus, broker):
    run = start(corpus)
    run_alignment(run.pk)
    deliver(run.pk, broker, limit=1)
    progress.cancel(AlignmentRun, run.pk)
    deliver(run.pk, broker)
    assert broker == [] and AlignmentRun.objects.get(pk=run.pk).status == Status.CANCELLED
    assert not Prediction.objects.filter(run=run).exists()
    assert RunChunk.objects.filter(run=run, status=Status.SUCCEEDED).count() == 1


def test_a_chunk_delivered_before_its_stage_is_due_does_nothing(corpus, broker):
    run = start(corpus)
    run_alignment(run.pk)
    run.refresh_from_db()
    search = mining.stage_of(run, 0)[2].stop + 1  # the first search chunk, while encoding is not done
    align_chunk(run.pk, search)
    assert RunChunk.objects.get(run=run, index=search).status == Status.QUEUED
    assert AlignmentRun.objects.get(pk=run.pk).status == Status.RUNNING


def test_bad_mining_options_are_refused_when_the_run_is_started(corpus):
    with pytest.raises(ValueError, match="bad mine option.*treshold: unknown option"):
        alignment_runs.start_run(corpus, "muss-corpus", params={"treshold": 1}, enqueue=False)
    assert "muss-corpus" in run_options.available_methods()


def test_align_now_runs_every_chunk_in_this_process(corpus, broker):
    from django.core.management import call_command

    call_command("align", corpus.name, "--method", "muss-corpus", "--params", '{"max_distance": 1.5, "max_relative": 0.95}',
                 "--now")
    run = AlignmentRun.objects.get(method="muss-corpus")
    assert run.status == Status.SUCCEEDED and run.pair_count > 0 and broker == []


def test_an_auto_export_of_a_mining_run_holds_pairs_across_articles(corpus, broker, settings, tmp_path):
    from tests.annotation.services.export.helpers import all_pairs
    from tests.annotation.services.export.helpers import run as export

    run = start(corpus)
    run_alignment(run.pk)
    deliver(run.pk, broker)
    _, root = export(corpus, settings, tmp_path, kind="auto", runs=[run.pk], formats=["jsonl"],
                     split_policy={"mode": "counts", "train": 3, "dev": 0, "test": 0, "seed": 0})
    rows = all_pairs(root)
    assert len(rows) == AlignmentRun.objects.get(pk=run.pk).pair_count
    assert any(r["complex_level"] == "report" or r["simple_level"] == "report" for r in rows)


def test_a_mining_runs_params_are_parsed_once_into_its_request(corpus, api):
    request = run_options.MiningRequest.parse({"k": 3, "keep_files": True})
    assert request.config.k == 3 and request.config.shard_size == 4096 and request.keep_files and request.access_attributes
    with pytest.raises(run_options.RunOptionsError, match="keep_files") as refused_here:
        run_options.MiningRequest.parse({"keep_files": "yes", "k": 0})
    assert set(refused_here.value.problems) == {"keep_files", "k"}  # the engine's and the app's options at once
    client = api(corpus.memberships.get(role="researcher").user)
    refused = client.post("/api/runs/", {"project": corpus.pk, "method": "muss-corpus", "params": {"keep_files": 2}},
                          format="json")
    assert refused.status_code == 400 and "keep_files" in refused.json()["detail"], refused.content
    assert not AlignmentRun.objects.exists()
