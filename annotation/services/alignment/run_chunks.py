"""The run executor: every alignment run is a plan of chunks of document pairs, one task each.

::

    run_alignment ─ plan (once) ─▶ align_chunk × n (any workers of the run's queue) ─▶ finish (once)

The same plan runs on many workers or inline in one process (:func:`run_inline`: ``manage.py align
--now``, :func:`~annotation.services.alignment.alignment_runs.execute_run`, tests), with the same
setup (:mod:`.run_setup`), work list (:mod:`.run_work`), saving (:mod:`.run_saving`) and result
(:mod:`.run_result`), so a run gives the same pairs and describes itself the same way however it
is executed. What differs between kinds of run is an :class:`~.run_work.Executor`: an aligner's run
(:data:`ALIGNER`) or a mining run (:data:`.mining.EXECUTOR`, a staged plan whose chunks run stage by stage).

* **Plan.** The run's task (``registry.RUN``) claims the run and cuts its document pairs into
  :class:`~annotation.models.RunChunk` rows (:func:`.run_work.plan`): a shared run (:func:`.run_setup.is_shared`)
  in chunks of about ``RUN_CHUNK_SENTENCES`` sentences, a run-level method (WIVICO's cut-offs need
  every document pair at once) in one chunk whose task first runs the method's prepare pass. It
  sends one ``align_chunk`` task per chunk not yet done on the run's queue. The plan is stored once
  (unique ``(run, index)``): a re-delivered plan task, a retry or a re-queue by the reaper plans
  nothing new and re-sends only the chunks still missing (the done chunks are the run's checkpoint).
* **Chunk.** A chunk task claims its row with a conditional UPDATE (queued, or running with a
  stale heartbeat → running for this worker), keeps its own heartbeat and the run's fresh while it
  works, aligns the chunk's document pairs in one engine call (on the gpu queue the encoder batches
  across them), and writes them in one set-based upsert, so a re-delivered or retried chunk writes
  the same rows once. It then marks the chunk done — only if its attempt still owns it.
* **Finish.** Every chunk, after its own work, and every liveness sweep check "all chunks done";
  the run is finalised by a conditional UPDATE (RUNNING → SUCCEEDED), so exactly once.
* **Cancel** stops chunks not yet started (they find the run cancelled and return) and the running
  ones at their next progress report (their row goes back to queued). **Retry** re-runs the plan:
  only missing chunks are sent. The **liveness sweep** (:func:`sweep_lost_chunks`) re-queues
  chunks whose worker stopped beating.
"""
from __future__ import annotations

import time
from collections.abc import Callable

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import Count, F, Q
from django.utils import timezone

from annotation.models import MINING_METHOD, AlignmentRun, RunChunk, Status
from annotation.services.alignment import mining, run_result, run_setup, run_work
from annotation.services.alignment.run_saving import save_alignments
from annotation.services.background import progress
from annotation.services.background.dispatch import send_run_chunk
from annotation.services.background.registry import TRANSIENT
from annotation.services.corpus.documents import engine_pair
from workers.engine import configure_embedding_store, encoder_counters, is_run_level, prime_encoders

Send = Callable[[AlignmentRun, int], None]
RUN_LEVEL_SHARE = 0.4
"""Share of a one-chunk run's progress bar that a run-level method's first pass takes."""
REPORT_EVERY = 1.0
"""Seconds between two progress writes of a chunk."""
ENCODE_SHARE = 0.8
"""Share of a chunk's bar that encoding its sentences takes, for a method with an encoder: on CPU it is
most of the chunk (bench/align_scale.py: 1,100 s encoding of 1,212 s per chunk's encode/decode/write)."""


# --- the plan -------------------------------------------------------------------------------------

def _plan(run: AlignmentRun) -> run_work.Planned:
    chunks = run_work.plan(run, shared=run_setup.is_shared(run))
    return run_work.Planned(chunks, sum(len(c.work) for c in chunks))


def executor_of(run: AlignmentRun) -> run_work.Executor:
    """A mining run's executor (:data:`.mining.EXECUTOR`, a staged plan), or an aligner's (:data:`ALIGNER`)."""
    return mining.EXECUTOR if run.method == MINING_METHOD else ALIGNER


def plan_run(run_id: int, *, send: Send | None = None) -> None:
    """The body of a run's task: plan the run into chunks (once) and send the chunks that may start now."""
    if not progress.claim(AlignmentRun, run_id):
        return
    try:
        run = AlignmentRun.objects.select_related("project", "model_version").get(pk=run_id)
        executor = executor_of(run)
        planned = executor.plan(run)
        checkpoint = {**(run.checkpoint or {}), "chunks": len(planned.chunks), **planned.checkpoint}
        AlignmentRun.objects.filter(pk=run_id).update(articles_total=planned.articles, checkpoint=checkpoint)
        run.checkpoint = checkpoint
        # chunks lost with their worker (or failed) are due again; queued ones are sent again (a
        # duplicate delivery finds its chunk claimed or done and does nothing)
        now = timezone.now()
        RunChunk.objects.filter(Q(run_id=run_id) & (Q(status=Status.FAILED) | progress.lost(now))).update(status=Status.QUEUED)
        missing = list(RunChunk.objects.filter(run_id=run_id).exclude(status=Status.SUCCEEDED)
                       .order_by("index").values_list("index", flat=True))
        executor.report(run_id)
        for index in executor.due(run, missing):
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


def _send(run: AlignmentRun, index: int) -> None:
    send_run_chunk(run, index, queue=executor_of(run).queue(run, index))


# --- one chunk ------------------------------------------------------------------------------------

def run_chunk(run_id: int, index: int, *, last_try: bool = True, send: Send | None = None) -> None:
    """Run one chunk (the body of every ``align_chunk`` task), send what it made due (the next stage of a
    staged plan), then finish the run if this was its last chunk. Nothing happens unless the run is
    RUNNING and the chunk is free and due."""
    run = AlignmentRun.objects.filter(pk=run_id).select_related("project", "model_version").first()
    if run is None or run.status != Status.RUNNING:
        return
    executor = executor_of(run)
    if not executor.ready(run, index):
        return  # an early copy: the chunk is sent again when the stages before it are done
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
            stats = executor.run(run, chunk)
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
            try:
                if not connection.in_atomic_block:
                    connection.close_if_unusable_or_obsolete()
                mine.update(status=Status.QUEUED, heartbeat_at=None)
            except DatabaseError:
                pass
        raise
    mine.update(status=Status.SUCCEEDED, finished_at=timezone.now(), pair_count=stats["pairs"], stats=stats)
    executor.report(run_id)
    for later in executor.then(run, chunk):
        (send or _send)(run, later)
    maybe_finish(run_id)


def _reporter(run_id: int, chunk_id: int, *, alone: bool) -> Callable[[float, str], None]:
    """A chunk's progress callback (at most once a second): cancel reaches a running chunk here; the
    only chunk of a run (``alone``) shows its progress as the run's; one of several stores its fraction
    on its row and the run's bar counts it (:func:`run_result.moving`), so the bar moves within chunks."""
    last = [0.0]

    def report(fraction: float, message: str = "") -> None:
        if time.monotonic() - last[0] >= REPORT_EVERY:
            last[0] = time.monotonic()
            progress.check_cancelled(AlignmentRun, run_id)
            if alone:
                AlignmentRun.objects.filter(pk=run_id, status=Status.RUNNING).update(
                    progress=round(100.0 * min(fraction, 0.999), 1), message=message[:500])
            else:
                RunChunk.objects.filter(pk=chunk_id, status=Status.RUNNING).update(
                    stats={"progress": round(min(max(fraction, 0.0), 1.0), 4)})
                run_result.moving(run_id)

    return report


def align_chunk(run: AlignmentRun, chunk: RunChunk) -> dict:
    """Align the chunk's document pairs in one engine call (a run-level method: after its prepare
    pass over them) and save them in one set-based write; returns the chunk's counters and seconds."""
    configure_embedding_store(str(settings.EMBEDDING_CACHE_DIR), settings.EMBEDDING_CACHE_MAX_ROWS)
    t0 = time.monotonic()
    aligner = run_setup.load(run).aligner
    access = run_setup.access_scorer(run)
    t1 = time.monotonic()
    work = run_work.load(chunk)
    inputs = [engine_pair(c, s) for _, c, s in work]
    t2 = time.monotonic()
    report = _reporter(run.pk, chunk.pk, alone=not RunChunk.objects.filter(run_id=run.pk).exclude(pk=chunk.pk).exists())
    progress.check_cancelled(AlignmentRun, run.pk)
    stats: dict = {}
    share = 0.0
    if is_run_level(aligner) and inputs:  # the prepare step of a run-level method's one chunk
        share = RUN_LEVEL_SHARE
        stats["run_level"] = aligner.prepare(inputs, progress=lambda f, m: report(share * f, m), total=len(inputs))  # type: ignore[attr-defined]
    t3 = time.monotonic()
    before = encoder_counters()
    # the encoder's work of the whole chunk in one batched call (full batches on a GPU); the
    # aligner's per-pair calls then find every sentence in memory
    texts = [t for pair in inputs for side in (pair.complex, pair.simple) for t in side.sentences]
    encode = (1 - share) * ENCODE_SHARE if texts else 0.0  # the bar moves per batch of sentences encoded
    encoders = prime_encoders(aligner, texts, progress=lambda f: report(share + encode * f, "encoding the sentences"))
    primed = encoder_counters()
    if not encoders:
        encode = 0.0
    start = share + encode
    outputs = aligner.align(inputs, progress=lambda f, m: report(start + (1 - start) * f, m))
    t4 = time.monotonic()
    after = encoder_counters()
    progress.check_cancelled(AlignmentRun, run.pk)
    pairs = save_alignments(run, [(a, c, s, alignment, access.for_pair(pair) if access else None)
                                  for (a, c, s), pair, alignment in zip(work, inputs, outputs)])
    seconds = {"load_model_s": t1 - t0, "load_s": t2 - t1, "align_s": t4 - t3, "encode_s": after["encode_s"] - before["encode_s"],
               "write_s": time.monotonic() - t4, **({"run_level_s": t3 - t2} if "run_level" in stats else {})}
    # sentences needing an embedding: the chunk's distinct ones (plus any the aligner asked for beyond them)
    requested = (primed["requested"] - before["requested"]) + (after["encoded"] - primed["encoded"]) if encoders else 0
    return {**stats, "pairs": pairs, "document_pairs": len(work), "sentences": chunk.sentences, "decodes": len(work),
            "encoders": encoders, "requested": requested, "encoded": after["encoded"] - before["encoded"],
            "store_hits": after["store_hits"] - before["store_hits"], "seconds": {k: round(v, 4) for k, v in seconds.items()},
            "missing_features": dict(access.skipped) if access is not None else {},
            "parser": access.parser_note if access is not None else None,
            # a trained model aligns article pairs unlike its training articles as the untrained aligner
            "outside_model_domain": sum(1 for a in outputs if a.meta.get("domain"))}


# --- finishing ------------------------------------------------------------------------------------

def maybe_finish(run_id: int) -> bool:
    """Finalise the run once every chunk is done (a conditional UPDATE: exactly once)."""
    run = (AlignmentRun.objects.filter(pk=run_id, status=Status.RUNNING)
           .select_related("project", "model_version").first())
    return run is not None and run_result.finish_chunks(run, executor_of(run).result)


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
    """Run the whole plan of a run in this process, chunk after chunk, as one worker would. A
    transient error leaves the run RUNNING and lost at once, for a retry that resumes at its first
    unfinished chunk; any other error fails the run."""
    todo: list[int] = []

    def send(_run: AlignmentRun, index: int) -> None:
        todo.append(index)

    plan_run(run_id, send=send)
    while todo:
        try:
            run_chunk(run_id, todo.pop(0), last_try=False, send=send)
        except TRANSIENT as exc:
            progress.interrupted(AlignmentRun, run_id, exc)
            raise


def _align(run: AlignmentRun, chunk: RunChunk) -> dict:
    return align_chunk(run, chunk)  # looked up when called (as the two below): tests replace them


def _report(run_id: int) -> None:
    run_result.report(run_id)


def _result(run: AlignmentRun) -> tuple[dict, dict]:
    return run_result.of_chunks(run)


ALIGNER = run_work.Executor(plan=_plan, run=_align, report=_report, result=_result)
"""An aligner's run: chunks of document pairs, any of which may run at any time."""
chunk_summary = run_result.chunk_summary

__all__ = ["executor_of", "plan_run", "run_chunk", "align_chunk", "maybe_finish", "chunk_summary", "sweep_lost_chunks",
           "run_inline"]
