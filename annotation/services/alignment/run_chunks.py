"""Alignment runs shared by many workers: a run planned into chunks of document pairs, one Celery task each.

::

    run_alignment ─ plan (once) ─▶ align_chunk × n (any workers of the run's queue) ─▶ finish (once)

* **Plan.** The run's task (``registry.RUN``) claims the run, cuts its document pairs — in the
  order of a one-process run — into :class:`~annotation.models.RunChunk` rows of about
  ``RUN_CHUNK_SENTENCES`` sentences each (so chunks cost about the same), and sends one
  ``align_chunk`` task per chunk not yet done on the run's queue. The plan is stored once (unique
  ``(run, index)``): a re-delivered plan task, a retry or a re-queue by the reaper plans nothing new
  and re-sends only the chunks still missing. A method with run-level state (WIVICO's cut-offs:
  they need every document pair at once) keeps the one-task path of ``alignment_runs``.
* **Chunk.** A chunk task claims its row with a conditional UPDATE (queued, or running with a
  stale heartbeat → running for this worker), keeps its own heartbeat and the run's fresh while it
  works, aligns the chunk's document pairs in one engine call (on the gpu queue the encoder batches
  across them), and writes them in one set-based upsert (``save_alignments``: pairs on their
  identity, predictions on (run, pair)), so a re-delivered or retried chunk writes the same rows
  once. It then marks the chunk done — only if its attempt still owns it.
* **Finish.** Every chunk, after its own work, and every liveness sweep check "all chunks done";
  the run is finalised by a conditional UPDATE (RUNNING → SUCCEEDED), so exactly once, even when
  the worker that finished the last chunk died before finalising.
* **Cancel** stops chunks not yet started (they find the run cancelled and return) and the running
  ones at their next progress report (their row goes back to queued). **Retry** re-runs the plan:
  only missing chunks are sent. The **liveness sweep** (:func:`sweep_lost_chunks`) re-queues
  chunks whose worker stopped beating.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable

from django.conf import settings
from django.db.models import Count, F, Q
from django.utils import timezone

from annotation.models import MINING_METHOD, AlignmentRun, Article, Document, Prediction, RunChunk, Sentence, Status
from annotation.services.background import progress
from annotation.services.background.registry import TRANSIENT

Send = Callable[[AlignmentRun, int], None]


# --- the plan -------------------------------------------------------------------------------------

def plan_run(run_id: int, *, send: Send | None = None) -> None:
    """The body of a run's task: mining and run-level methods go their own way; any other run is
    planned into chunks (once) and its missing chunks are sent."""
    from annotation.services.alignment import alignment_runs, mining

    run = AlignmentRun.objects.filter(pk=run_id).first()
    if run is None:
        return
    if run.method == MINING_METHOD:
        mining.execute(run_id)
        return
    if not run.chunks.exists() and _is_run_level(run):
        alignment_runs.execute_run(run_id)
        return
    if not progress.claim(AlignmentRun, run_id):
        return
    try:
        chunks = plan(AlignmentRun.objects.select_related("project").get(pk=run_id))
        AlignmentRun.objects.filter(pk=run_id).update(
            articles_total=sum(len(c.work) for c in chunks), checkpoint={**(run.checkpoint or {}), "chunks": len(chunks)})
        # chunks lost with their worker (or failed) are due again; queued ones are sent again (a
        # duplicate delivery finds its chunk claimed or done and does nothing)
        now = timezone.now()
        RunChunk.objects.filter(Q(run_id=run_id) & (Q(status=Status.FAILED) | progress.lost(now))).update(status=Status.QUEUED)
        missing = list(RunChunk.objects.filter(run_id=run_id).exclude(status=Status.SUCCEEDED)
                       .order_by("index").values_list("index", flat=True))
        _report(run_id)
        for index in missing:
            (send or _send)(run, index)
        if not missing:
            maybe_finish(run_id)
    except progress.Cancelled:
        return
    except Exception as exc:  # noqa: BLE001 - stored on the run (errors as data), then re-raised
        if not progress.interrupted(AlignmentRun, run_id, exc):
            progress.fail(AlignmentRun, run_id, exc)
        raise
    finally:
        progress.release(AlignmentRun, run_id)  # the chunks keep the run's heartbeat from now on


def _is_run_level(run: AlignmentRun) -> bool:
    from workers.engine import is_run_level

    return is_run_level(_aligner(run)[0])


def plan(run: AlignmentRun) -> list[RunChunk]:
    """The run's chunks, created from its document pairs if it has none yet (deterministic: a
    concurrent planner creates the same rows, which the unique (run, index) keeps once)."""
    chunks = list(run.chunks.order_by("index"))
    if chunks:
        return chunks
    from annotation.services.alignment.alignment_runs import document_pairs

    skip = set(run.params.get("skip_articles") or ())
    work = [(a.pk, c.pk, s.pk) for a in run.project.articles.order_by("id") if a.pk not in skip
            for c, s in document_pairs(a, run.level_pairs)]
    counts = dict(Sentence.objects.filter(document_id__in={d for _, c, s in work for d in (c, s)})
                  .values("document_id").annotate(n=Count("id")).values_list("document_id", "n"))
    rows: list[RunChunk] = []
    current: list[list[int]] = []
    size = 0
    for a, c, s in work:
        n = counts.get(c, 0) + counts.get(s, 0)
        if current and size + n > settings.RUN_CHUNK_SENTENCES:
            rows.append(RunChunk(run=run, index=len(rows), work=current, sentences=size))
            current, size = [], 0
        current.append([a, c, s])
        size += n
    if current:
        rows.append(RunChunk(run=run, index=len(rows), work=current, sentences=size))
    RunChunk.objects.bulk_create(rows, ignore_conflicts=True)
    return list(run.chunks.order_by("index"))


def _send(run: AlignmentRun, index: int) -> None:
    from annotation.services.background.dispatch import send_run_chunk

    send_run_chunk(run, index)


# --- one chunk ------------------------------------------------------------------------------------

_loaded: dict[str, tuple] = {}


def _aligner(run: AlignmentRun) -> tuple:
    """(aligner, access scorer or None, defaults, encoder path) of a run, loaded once per process
    for the same method, options and model (the chunks of a run share them)."""
    from annotation.services.alignment.alignment_runs import (
        APP_PARAMS,
        AccessScorer,
        calibrated_defaults,
        project_method_defaults,
    )
    from annotation.services.projects.language_tools import project_encoder, project_pipeline
    from workers.engine import get_aligner

    model_path = run.model_version.path if run.model_version else (run.params.get("model") or project_encoder(run.project))
    defaults = {**project_method_defaults(run.project, run.method, run.params),
                **calibrated_defaults(run.project, run.method, run.params)}
    config = {**defaults, **{k: v for k, v in run.params.items() if k not in APP_PARAMS}}
    access = run.params.get("access_attributes", True)
    pipeline = project_pipeline(run.project) if access else None
    key = json.dumps([run.method, config, model_path, access, run.project.language, pipeline], sort_keys=True, default=str)
    if key not in _loaded:
        _loaded.clear()  # one run's models at a time: a worker's memory stays bounded
        _loaded[key] = (get_aligner(run.method, config, model_path),
                        AccessScorer(run.project.language, pipeline) if access else None, defaults, model_path)
    return _loaded[key]


def _configure_cache() -> None:
    from workers.engine import configure_embedding_store

    configure_embedding_store(str(settings.EMBEDDING_CACHE_DIR), settings.EMBEDDING_CACHE_MAX_ROWS)


def run_chunk(run_id: int, index: int, *, last_try: bool = True) -> None:
    """Align and save one chunk (the body of every ``align_chunk`` task), then finish the run if
    this was its last chunk. Nothing happens unless the run is RUNNING and the chunk is free."""
    run = AlignmentRun.objects.filter(pk=run_id).select_related("project", "model_version").first()
    if run is None or run.status != Status.RUNNING:
        return
    now = timezone.now()
    claimed = RunChunk.objects.filter(Q(run_id=run_id, index=index) & (Q(status=Status.QUEUED) | progress.lost(now))).update(
        status=Status.RUNNING, worker=progress.worker_name(), started_at=now, heartbeat_at=now, attempts=F("attempts") + 1)
    if not claimed:
        maybe_finish(run_id)
        return
    chunk = RunChunk.objects.get(run_id=run_id, index=index)
    mine = RunChunk.objects.filter(pk=chunk.pk, status=Status.RUNNING, attempts=chunk.attempts)
    try:
        with progress.heartbeat(RunChunk, chunk.pk), progress.heartbeat(AlignmentRun, run_id):
            stats = align_chunk(run, chunk)
    except progress.Cancelled:
        mine.update(status=Status.QUEUED, heartbeat_at=None)  # a retry of the run sends it again
        return
    except Exception as exc:  # noqa: BLE001 - stored on the run (errors as data), then re-raised
        if last_try or not isinstance(exc, TRANSIENT):
            mine.update(status=Status.FAILED, finished_at=timezone.now(), stats={"error": str(exc)[:500]})
            AlignmentRun.objects.filter(pk=run_id, status=Status.RUNNING).update(
                status=Status.FAILED, finished_at=timezone.now(), message="failed",
                error=f"chunk {index}: {type(exc).__name__}: {exc}"[:5000])
        else:  # Celery's retry claims it again (or, with no database now, the sweep once it is stale)
            from django.db import DatabaseError, connection

            try:
                if not connection.in_atomic_block:
                    connection.close_if_unusable_or_obsolete()
                mine.update(status=Status.QUEUED, heartbeat_at=None)
            except DatabaseError:
                pass
        raise
    mine.update(status=Status.SUCCEEDED, finished_at=timezone.now(), pair_count=stats["pairs"], stats=stats)
    _report(run_id)
    maybe_finish(run_id)


def align_chunk(run: AlignmentRun, chunk: RunChunk) -> dict:
    """Align the chunk's document pairs in one engine call and save them in one set-based write;
    returns the chunk's counters and per-stage seconds."""
    from annotation.services.alignment.alignment_runs import save_alignments
    from annotation.services.corpus.documents import engine_pair
    from workers.engine import encoder_counters, prime_encoders

    _configure_cache()
    t0 = time.monotonic()
    aligner, access, _, _ = _aligner(run)
    t1 = time.monotonic()
    articles = Article.objects.in_bulk({a for a, _, _ in chunk.work})
    documents = Document.objects.in_bulk({d for _, c, s in chunk.work for d in (c, s)})
    work = [(articles[a], documents[c], documents[s]) for a, c, s in chunk.work
            if a in articles and c in documents and s in documents]  # a document deleted since the plan
    inputs = [engine_pair(c, s) for _, c, s in work]
    t2 = time.monotonic()
    before = encoder_counters()
    last = [0.0]

    def report(_fraction: float, _message: str = "") -> None:  # cancel reaches a running chunk here
        if time.monotonic() - last[0] > 1.0:
            last[0] = time.monotonic()
            progress.check_cancelled(AlignmentRun, run.pk)

    progress.check_cancelled(AlignmentRun, run.pk)
    # the encoder's work of the whole chunk in one batched call (full batches on a GPU); the
    # aligner's per-pair calls then find every sentence in memory
    texts = [t for pair in inputs for side in (pair.complex, pair.simple) for t in side.sentences]
    encoders = prime_encoders(aligner, texts)
    primed = encoder_counters()
    outputs = aligner.align(inputs, progress=report)
    t3 = time.monotonic()
    after = encoder_counters()
    progress.check_cancelled(AlignmentRun, run.pk)
    pairs = save_alignments(run, [(a, c, s, alignment, access.for_pair(pair) if access else None)
                                  for (a, c, s), pair, alignment in zip(work, inputs, outputs)])
    t4 = time.monotonic()
    # sentences needing an embedding: the chunk's distinct ones (plus any the aligner asked for beyond them)
    requested = (primed["requested"] - before["requested"]) + (after["encoded"] - primed["encoded"]) if encoders else 0
    encoded = after["encoded"] - before["encoded"]
    return {"pairs": pairs, "document_pairs": len(work), "sentences": chunk.sentences,
            "decodes": len(work), "encoders": encoders, "requested": requested, "encoded": encoded,
            "store_hits": after["store_hits"] - before["store_hits"],
            "seconds": {"load_model_s": round(t1 - t0, 4), "load_s": round(t2 - t1, 4), "align_s": round(t3 - t2, 4),
                        "encode_s": round(after["encode_s"] - before["encode_s"], 4), "write_s": round(t4 - t3, 4)},
            "missing_features": dict(access.skipped) if access is not None else {},
            # a trained model aligns article pairs unlike its training articles as the untrained aligner
            "outside_model_domain": sum(1 for a in outputs if a.meta.get("domain"))}


def _report(run_id: int) -> None:
    """The run's progress from its chunks: document pairs done, pairs written, chunks done/total."""
    totals = RunChunk.objects.filter(run_id=run_id).aggregate(n=Count("id"), done=Count("id", filter=Q(status=Status.SUCCEEDED)))
    done_pairs = sum(len(w) for w in RunChunk.objects.filter(run_id=run_id, status=Status.SUCCEEDED).values_list("work", flat=True))
    written = Prediction.objects.filter(run_id=run_id).count()
    fraction = totals["done"] / totals["n"] if totals["n"] else 0.0
    AlignmentRun.objects.filter(pk=run_id, status=Status.RUNNING).update(
        articles_done=done_pairs, pair_count=written, progress=round(100.0 * min(fraction, 0.999), 1),
        message=f"chunks {totals['done']}/{totals['n']} · {done_pairs} document pairs · {written} pairs written")


# --- finishing, and what the run page shows -----------------------------------------------------------

def chunk_summary(run_id: int) -> dict:
    """Chunks done/total, pairs written and which workers ran chunks (the run page and API)."""
    rows = list(RunChunk.objects.filter(run_id=run_id).values("status", "worker", "pair_count", "stats"))
    if not rows:
        return {}
    done = [r for r in rows if r["status"] == Status.SUCCEEDED]
    workers: dict[str, int] = {}
    for r in done:
        workers[r["worker"]] = workers.get(r["worker"], 0) + 1
    stats = [r["stats"] or {} for r in done]
    requested = sum(s.get("requested", 0) for s in stats)
    encoded = sum(s.get("encoded", 0) for s in stats)
    return {"total": len(rows), "done": len(done), "running": sum(r["status"] == Status.RUNNING for r in rows),
            "failed": sum(r["status"] == Status.FAILED for r in rows), "pairs_written": sum(r["pair_count"] for r in done),
            "workers": workers,
            "embedding_cache": {"requested": requested, "encoded": encoded,
                                "store_hits": sum(s.get("store_hits", 0) for s in stats),
                                "hit_rate": round(1 - encoded / requested, 4) if requested else None}}


def maybe_finish(run_id: int) -> bool:
    """Finalise the run once every chunk is done (a conditional UPDATE: exactly once)."""
    if RunChunk.objects.filter(run_id=run_id).exclude(status=Status.SUCCEEDED).exists():
        return False
    if not RunChunk.objects.filter(run_id=run_id).exists():
        return False
    run = AlignmentRun.objects.filter(pk=run_id, status=Status.RUNNING).select_related("project", "model_version").first()
    if run is None:
        return False
    from annotation.services.projects.language_tools import BUNDLED_ENCODER, project_pipeline

    summary = chunk_summary(run_id)
    stats = [s or {} for s in RunChunk.objects.filter(run_id=run_id).values_list("stats", flat=True)]
    timings: dict[str, float] = {}
    for s in stats:
        for k, v in (s.get("seconds") or {}).items():
            timings[k] = round(timings.get(k, 0.0) + v, 3)
    timings["total_s"] = round((timezone.now() - (run.started_at or run.created_at)).total_seconds(), 3)
    access = run.params.get("access_attributes", True)
    missing = {k: v for s in stats for k, v in (s.get("missing_features") or {}).items()}
    model_path = run.model_version.path if run.model_version else (run.params.get("model") or "")
    pair_count = Prediction.objects.filter(run_id=run_id).count()
    document_pairs = sum(len(w) for w in RunChunk.objects.filter(run_id=run_id).values_list("work", flat=True))
    result = {"document_pairs": document_pairs, "pairs": pair_count, "chunks": summary,
              "outside_model_domain": sum(s.get("outside_model_domain", 0) for s in stats),
              "language_tools": {"encoder": model_path or BUNDLED_ENCODER,
                                 "spacy_pipeline": project_pipeline(run.project) if access else None},
              "missing_features": missing if access else
              {"access_*": "ACCESS attributes switched off for this run (params.access_attributes = false)"}}
    return bool(AlignmentRun.objects.filter(pk=run_id, status=Status.RUNNING).update(
        status=Status.SUCCEEDED, progress=100.0, message="done", finished_at=timezone.now(), result=result,
        timings=timings, pair_count=pair_count, articles_done=document_pairs))


def sweep_lost_chunks() -> list[str]:
    """Liveness per chunk (run by every reaper pass): a RUNNING chunk whose worker stopped beating is
    re-queued and sent again; a run whose chunks are all done but was never finalised is finalised."""
    swept: list[str] = []
    now = timezone.now()
    for chunk in RunChunk.objects.filter(progress.lost(now), run__status=Status.RUNNING).select_related("run"):
        if RunChunk.objects.filter(progress.lost(now), pk=chunk.pk, attempts=chunk.attempts).update(status=Status.QUEUED):
            _send(chunk.run, chunk.index)
            swept.append(f"run #{chunk.run_id} chunk {chunk.index}")
    finished = (RunChunk.objects.filter(run__status=Status.RUNNING).values("run_id")
                .annotate(left=Count("id", filter=~Q(status=Status.SUCCEEDED))).filter(left=0).values_list("run_id", flat=True))
    for run_id in finished:
        if maybe_finish(run_id):
            swept.append(f"run #{run_id} finished")
    return swept


def run_inline(run_id: int) -> None:
    """Every chunk of a run in this process, in order, as one worker would (the reference for
    "a run on many workers writes what one process writes")."""
    todo: list[int] = []
    plan_run(run_id, send=lambda _run, index: todo.append(index))
    for index in todo:
        run_chunk(run_id, index)


__all__ = ["plan_run", "plan", "run_chunk", "align_chunk", "maybe_finish", "chunk_summary", "sweep_lost_chunks",
           "run_inline"]
