"""A run's result: what a finished run stores about itself (pairs, the encoder and pipeline it used,
the ACCESS attributes it could not score, timings), built and written here for every run, so a run
describes itself the same way however it was executed.

Every run is finalised by :func:`finish_chunks` (exactly once: a conditional RUNNING → SUCCEEDED
update) with its executor's result: an aligner's run from its chunks' stats (:func:`of_chunks`), a
mining run from its chunks and its job folder (:func:`annotation.services.alignment.mining.result`),
both with the same common part (:func:`describe`)."""
from __future__ import annotations

from collections.abc import Callable

from django.db.models import Count, F, Q
from django.utils import timezone

from annotation.models import AlignmentRun, Prediction, RunChunk, Status
from annotation.services.alignment.run_setup import defaults_of, language_tools

ACCESS_OFF = {"access_*": "ACCESS attributes switched off for this run (params.access_attributes = false)"}


def describe(run: AlignmentRun, *, missing: dict[str, str]) -> dict:
    """The part of a result every run has: its pairs, language tools and missing features."""
    access = run.params.get("access_attributes", True)
    return {"pairs": Prediction.objects.filter(run_id=run.pk).count(), "language_tools": language_tools(run),
            "missing_features": missing if access else ACCESS_OFF}


def total_seconds(run: AlignmentRun) -> float:
    return round((timezone.now() - (run.started_at or run.created_at)).total_seconds(), 3)


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


def of_chunks(run: AlignmentRun) -> tuple[dict, dict]:
    """The result and timings of a run whose chunks are all done, from their stats."""
    rows = list(RunChunk.objects.filter(run_id=run.pk).order_by("index").values_list("work", "stats"))
    stats = [s or {} for _, s in rows]
    timings: dict[str, float] = {}
    for s in stats:
        for k, v in (s.get("seconds") or {}).items():
            timings[k] = round(timings.get(k, 0.0) + v, 3)
    timings["total_s"] = total_seconds(run)
    missing = {k: v for s in stats for k, v in (s.get("missing_features") or {}).items()}
    result = {"document_pairs": sum(len(work) for work, _ in rows),
              **describe(run, missing=missing), "project_defaults": defaults_of(run),
              "chunks": chunk_summary(run.pk), "outside_model_domain": sum(s.get("outside_model_domain", 0) for s in stats)}
    if run.params.get("access_attributes", True):
        result["access_attributes"] = {"parser": next((s["parser"] for s in stats if s.get("parser")), None),
                                       "skipped": missing}
    run_level = [s["run_level"] for s in stats if "run_level" in s]
    if run_level:
        result["run_level"] = run_level[0]
    return result, timings


def finish_chunks(run: AlignmentRun, describe_run: Callable[[AlignmentRun], tuple[dict, dict]] = of_chunks) -> bool:
    """Finalise the run once every chunk is done (a conditional UPDATE: exactly once), with the result
    and timings ``describe_run`` gives (an aligner's run: :func:`of_chunks`)."""
    chunks = RunChunk.objects.filter(run_id=run.pk)
    if not chunks.exists() or chunks.exclude(status=Status.SUCCEEDED).exists():
        return False
    result, timings = describe_run(run)
    return bool(AlignmentRun.objects.filter(pk=run.pk, status=Status.RUNNING).update(
        status=Status.SUCCEEDED, progress=100.0, message="done", finished_at=timezone.now(), result=result,
        timings=timings, pair_count=result["pairs"], articles_done=F("articles_total")))


def fraction_done(run_id: int) -> float:
    """The share of the run done: its chunks weighted by their sentences, a finished chunk whole and a
    running one by the fraction it last reported (``stats["progress"]``)."""
    total = done = 0.0
    for state, sentences, stats in RunChunk.objects.filter(run_id=run_id).values_list("status", "sentences", "stats"):
        weight = max(1, sentences)
        total += weight
        if state == Status.SUCCEEDED:
            done += weight
        elif state == Status.RUNNING and isinstance(stats, dict):
            done += weight * min(1.0, max(0.0, float(stats.get("progress") or 0.0)))
    return done / total if total else 0.0


def moving(run_id: int) -> None:
    """A running chunk reported: the run's bar from :func:`fraction_done` (never backwards)."""
    fraction = round(100.0 * min(fraction_done(run_id), 0.999), 1)
    AlignmentRun.objects.filter(pk=run_id, status=Status.RUNNING, progress__lt=fraction).update(progress=fraction)


def report(run_id: int) -> None:
    """The run's progress from its chunks: document pairs done, pairs written, chunks done/total."""
    totals = RunChunk.objects.filter(run_id=run_id).aggregate(n=Count("id"), done=Count("id", filter=Q(status=Status.SUCCEEDED)))
    done_pairs = sum(len(w) for w in RunChunk.objects.filter(run_id=run_id, status=Status.SUCCEEDED).values_list("work", flat=True))
    written = Prediction.objects.filter(run_id=run_id).count()
    fraction = fraction_done(run_id)
    AlignmentRun.objects.filter(pk=run_id, status=Status.RUNNING).update(
        articles_done=done_pairs, pair_count=written, progress=round(100.0 * min(fraction, 0.999), 1),
        message=f"chunks {totals['done']}/{totals['n']} · {done_pairs} document pairs · {written} pairs written")
