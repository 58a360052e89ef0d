"""Mining runs: MUSS paraphrase mining over every document of a project, in idempotent Celery chunks.

A mining run is an :class:`AlignmentRun` with method ``muss-corpus``. It pools *all* the
project's documents — any levels, or documents no article relates — and mines paraphrases
across them (MUSS §3.1, App. A.1) with :mod:`workers.engine.mining`, whose job folder lives under
``MEDIA_ROOT/mining/<run id>/``. The work is cut into chunks that any number of workers run in
parallel::

    run_alignment ─ plan ─▶ mine_encode_shard × n ─▶ mine_build_index ─▶ mine_search_shard × n
                                                    ─▶ mine_merge ─▶ mine_save_shard × m ─▶ done

No result backend and no extra table coordinate them; files do:

* A chunk is done when its output file exists; outputs are written under a temporary name and
  renamed into place, so a chunk re-delivered after its worker died (``acks_late``), or run twice,
  skips the work. Save chunks (the database writes) are upserts, recorded when committed.
* Every chunk, after its own work, looks at the job: when its stage has no missing chunk left it
  starts the next stage. An exclusively created marker file lets exactly one worker do that.
* A run that failed — or one left running after its worker died and its messages were lost —
  is resumed by :func:`~annotation.services.background.jobs.retry_run`: the plan task runs again, plans
  nothing new and re-sends the missing chunks of the current stage.

Mined pairs become the project's sentence pairs like any run's (``save_alignment``: the pair is
upserted on its identity, the run attaches a :class:`Prediction`), so they enter the queue and
exports. A pair of two documents of different articles belongs to the complex document's article.
``complex`` is the side with the lower Flesch Reading Ease.

Run params: the engine's mining options (:class:`~workers.engine.mining.MiningConfig`), plus the
app's options (:func:`~annotation.services.alignment.run_options.app_options`: ``access_attributes``,
``keep_files``). The encoder, the ACCESS scorer, the writing of pairs and the run's result are every
run's (:mod:`.run_setup`, :mod:`.run_saving`, :mod:`.run_result`).
"""
from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

from django.conf import settings

from annotation.models import AlignmentRun, Document, Status
from annotation.services.alignment import run_options, run_result, run_setup
from annotation.services.alignment.run_saving import save_alignment
from annotation.services.background import progress
from annotation.services.background.dispatch import send_chunk
from annotation.services.background.registry import TRANSIENT
from annotation.services.corpus.documents import stream_sentences
from workers.engine import MINING_STAGES as STAGES
from workers.engine import (
    AlignedPair,
    Alignment,
    ArticlePair,
    CorpusDocument,
    CorpusPair,
    MiningWork,
)
from workers.engine import Document as EngineDocument

SAVE_BATCH = 500
"""Mined pairs written per save chunk."""
RUN_STAGES = (*STAGES, "save")
Send = Callable[[str, int, int], None]
WEIGHTS = {"encode": 0.6, "index": 0.05, "search": 0.22, "merge": 0.03, "save": 0.1}
"""Share of the progress bar per stage (encoding dominates on CPU)."""


def folder_of(run: AlignmentRun) -> Path:
    """``MEDIA_ROOT/mining/<run id>-<created>/``: the creation time keeps a run from ever opening the
    folder of an earlier run that had the same id (a database reset while the media stayed)."""
    return Path(settings.MEDIA_ROOT) / "mining" / f"{run.pk}-{run.created_at:%Y%m%dT%H%M%S%f}"


# --- the plan (first task of a run, and of every retry) ---------------------------------------

def execute(run_id: int, *, send: Send | None = None) -> None:
    """Plan the run's job (once) and send the chunks of its current stage.

    On a retry or a re-delivery the plan exists: nothing is re-planned, and the chunks still
    missing are sent again (those already done are skipped by the workers)."""
    if not progress.claim(AlignmentRun, run_id):
        return
    try:
        run = AlignmentRun.objects.select_related("project", "model_version").get(pk=run_id)
        work = plan(run)
        AlignmentRun.objects.filter(pk=run_id).update(articles_total=int(work.plan["documents"]))
        dispatch(run_id, work, resume=True, send=send)
    except Exception as exc:  # noqa: BLE001 - stored on the run (errors as data), then re-raised
        progress.fail(AlignmentRun, run_id, exc)
        raise


def plan(run: AlignmentRun) -> MiningWork:
    """The run's job folder, created from the project's documents if it does not exist yet."""
    folder = folder_of(run)
    if MiningWork.exists(folder):
        return MiningWork(folder)
    return MiningWork.create(folder, project_documents(run.project), run_options.mining_config(run.params),
                             model=run_setup.encoder_of(run))


def project_documents(project) -> Iterator[CorpusDocument]:
    """Every document of the project with its sentences (id = the document's primary key)."""
    language = project.language or "en"
    for doc_id, sentences in stream_sentences(document__article__project=project):
        yield CorpusDocument(str(doc_id), tuple(s.text for s in sentences), language)


# --- chunks -------------------------------------------------------------------------------------

def run_chunk(run_id: int, stage: str, chunk: int = 0, *, last_try: bool = True, send: Send | None = None) -> None:
    """Run one chunk of a mining run (the body of every ``mine_*`` task), then start the next stage
    if this chunk completed the current one.

    Nothing happens unless the run is RUNNING (a cancelled, failed or finished run's late chunks
    are dropped). An error fails the run (errors as data) — except a transient database or
    connection error on a try that Celery will repeat (``last_try=False``)."""
    run = AlignmentRun.objects.filter(pk=run_id).select_related("project").first()
    if run is None or run.status != Status.RUNNING:
        return
    try:
        work = MiningWork(folder_of(run))
        if stage == "save":
            save_chunk(run, work, chunk)
        else:
            work.run_chunk(stage, chunk)
        report(run_id, work)
        dispatch(run_id, work, send=send)
    except Exception as exc:  # noqa: BLE001 - stored on the run, then re-raised
        if last_try or not isinstance(exc, TRANSIENT):
            progress.fail(AlignmentRun, run_id, exc)
        raise


def save_chunks(work: MiningWork) -> list[int]:
    return list(range(math.ceil(work.n_pairs() / SAVE_BATCH))) if work.is_done("merge") else []


def missing(work: MiningWork, stage: str) -> list[int]:
    if stage == "save":
        return [c for c in save_chunks(work) if work.marked(f"save-{c:05d}") is None]
    return work.missing(stage)


def current_stage(work: MiningWork) -> str | None:
    """The first stage with chunks to run (engine stages, then the database writes); None when done."""
    stage = work.current_stage()
    if stage is not None:
        return stage
    return "save" if missing(work, "save") else None


def _send(stage: str, run_id: int, chunk: int) -> None:
    """Queue a chunk's task (encoding on gpu, the rest on cpu)."""
    send_chunk(stage, run_id, chunk)


def dispatch(run_id: int, work: MiningWork, *, resume: bool = False, send: Send | None = None) -> list[tuple[str, int]]:
    """Send the chunks of the current stage, once per stage (``resume``: again, the missing ones);
    finish the run when nothing is left. Returns what was sent. ``send(stage, run_id, chunk)``
    replaces queueing the chunk's task (running a run in one process)."""
    stage = current_stage(work)
    if stage is None:
        if work.claim("finish") or resume:
            finish(run_id, work)
        return []
    if not (work.claim(f"start-{stage}") or resume):
        return []  # another worker started this stage, or it is still running
    sent = [(stage, c) for c in missing(work, stage)]
    for name, chunk in sent:
        (send or _send)(name, run_id, chunk)
    return sent


def save_chunk(run: AlignmentRun, work: MiningWork, chunk: int) -> int:
    """Write one slice of the mined pairs as sentence pairs with this run's predictions."""
    name = f"save-{chunk:05d}"
    if work.marked(name) is not None:
        return 0
    t0 = time.perf_counter()
    pairs = list(work.pairs(chunk * SAVE_BATCH, (chunk + 1) * SAVE_BATCH))
    groups: dict[tuple[str, str], list[CorpusPair]] = defaultdict(list)
    for p in pairs:
        groups[(p.complex.document, p.simple.document)].append(p)
    doc_ids = {int(d) for key in groups for d in key}
    documents = Document.objects.select_related("article").in_bulk(doc_ids)
    sentences = {d.id: d.sentences for d in work.documents if int(d.id) in doc_ids}
    access = run_setup.access_scorer(run)
    written = 0
    for (c_id, s_id), group in groups.items():
        complex_doc, simple_doc = documents.get(int(c_id)), documents.get(int(s_id))
        if complex_doc is None or simple_doc is None:
            continue  # a document deleted since the plan
        alignment = Alignment(f"{c_id}-{s_id}", [
            AlignedPair(complex=p.complex.sentences, simple=p.simple.sentences, label="aligned", score=p.score,
                        features={**p.features, "mined": 1.0}) for p in group])
        extra = None
        if access is not None:
            extra = access.for_pair(ArticlePair(
                id=alignment.id, complex=EngineDocument(paragraphs=(sentences[c_id],)),
                simple=EngineDocument(paragraphs=(sentences[s_id],))))
        written += save_alignment(run, complex_doc.article, complex_doc, simple_doc, alignment, extra)
    work.mark(name, {"seconds": round(time.perf_counter() - t0, 4), "pairs": written,
                     "missing_features": dict(access.skipped) if access is not None else {}})
    return written


def report(run_id: int, work: MiningWork) -> None:
    """Progress: the weighted share of chunks done, and a message naming the current stage."""
    done = 0.0
    message = "mining: done"
    for stage in RUN_STAGES:
        chunks = save_chunks(work) if stage == "save" else work.chunks(stage)
        if stage == "save" and not work.is_done("merge"):
            continue
        left = len(missing(work, stage))
        done += WEIGHTS[stage] * ((len(chunks) - left) / len(chunks) if chunks else 1.0)
        if left and message == "mining: done":
            message = f"mining: {stage} {len(chunks) - left}/{len(chunks)} chunks"
    AlignmentRun.objects.filter(pk=run_id, status=Status.RUNNING).update(
        progress=round(100.0 * min(done, 0.999), 1), message=message[:500])


def finish(run_id: int, work: MiningWork) -> None:
    """Record the result, per-stage timings and who ran the chunks; drop the bulky files."""
    run = AlignmentRun.objects.select_related("project", "model_version").get(pk=run_id)
    stage_times = work.timings()
    saves = [work.marked(f"save-{c:05d}") or {} for c in save_chunks(work)]
    stage_times["save"] = {"chunks": len(saves), "seconds": round(sum(s.get("seconds", 0.0) for s in saves), 3),
                           "workers": sorted({s.get("worker", "") for s in saves})}
    timings = {f"{stage}_s": t["seconds"] for stage, t in stage_times.items()}
    timings["total_s"] = run_result.total_seconds(run)
    result = {
        "documents": work.plan["documents"], "sentences": work.plan["sentences"],
        "sequences": work.plan["sequences"], "shards": work.plan["shards"], "index": work.plan["index"],
        "mined_pairs": work.n_pairs(),
        "mining": work.stats(), "chunks": {stage: {"chunks": t["chunks"], "workers": t["workers"]}
                                           for stage, t in stage_times.items()},
        **run_result.describe(run, missing={k: v for s in saves for k, v in s.get("missing_features", {}).items()}),
    }
    if not run.params.get("keep_files"):
        work.remove_intermediates()
    AlignmentRun.objects.filter(pk=run_id).update(articles_done=int(work.plan["documents"]))
    run_result.succeed(run, result, timings)


def run_inline(run_id: int) -> None:
    """Run a mining run's chunks in this process, in order, as a single worker would
    (``manage.py align --method muss-corpus --now``)."""
    todo: list[tuple[str, int]] = []

    def send(stage: str, _run: int, chunk: int) -> None:
        todo.append((stage, chunk))

    execute(run_id, send=send)
    while todo:
        stage, chunk = todo.pop(0)
        run_chunk(run_id, stage, chunk, send=send)
