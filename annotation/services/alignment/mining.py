"""Mining runs: MUSS paraphrase mining over every document of a project, as a staged plan of chunks.

A mining run is an :class:`AlignmentRun` with method ``muss-corpus``. It pools *all* the
project's documents — any levels, or documents no article relates — and mines paraphrases
across them (MUSS §3.1, App. A.1) with :mod:`workers.engine.mining`, whose job folder lives under
``MEDIA_ROOT/mining/<run id>/``. It runs on the one executor of every run (:mod:`.run_chunks`: the
same claim, heartbeat, cancel, retry, liveness sweep and finish) as this module's :data:`EXECUTOR`,
a plan of :class:`~annotation.models.RunChunk` rows in stages::

    run_alignment ─ plan (job folder + chunk rows) ─▶ encode × n ─▶ index ─▶ search × n ─▶ merge ─▶ save × n

The stages take consecutive chunk indices (the layout is stored in the run's checkpoint,
``checkpoint["stages"]``); a chunk may start once every chunk of the stages before it is done
(:func:`due`), and the chunk that completes a stage sends the next stage's chunks (:func:`then`;
if its worker dies first, the run's silent heartbeat re-queues the run and its plan task sends
them). Encoding goes to the run's queue (gpu by default), the other stages to ``cpu``. A chunk's
engine output is written atomically, so a chunk that runs twice finds its file and skips the work;
save chunks (the database writes) are upserts.

Mined pairs become the project's sentence pairs like any run's (``save_alignment``: the pair is
upserted on its identity, the run attaches a :class:`Prediction`), so they enter the queue and
exports. A pair of two documents of different articles belongs to the complex document's article.
``complex`` is the side with the lower Flesch Reading Ease.

Run params: the engine's mining options (:class:`~workers.engine.mining.MiningConfig`), plus the
app's options (``access_attributes``, ``keep_files``), parsed into one
:class:`~annotation.services.alignment.run_options.MiningRequest` when the run is started and by its plan.
The encoder, the ACCESS scorer, the writing of pairs and the run's result are every run's
(:mod:`.run_setup`, :mod:`.run_saving`, :mod:`.run_result`).
"""
from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings

from annotation.models import AlignmentRun, Document, Prediction, RunChunk, Status
from annotation.services.alignment import run_options, run_result, run_setup
from annotation.services.alignment.run_saving import save_alignment
from annotation.services.alignment.run_work import Executor, Planned
from annotation.services.background import progress
from annotation.services.background.registry import Queue
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

RUN_STAGES = (*STAGES, "save")
WEIGHTS = {"encode": 0.6, "index": 0.05, "search": 0.22, "merge": 0.03, "save": 0.1}
"""Share of the progress bar per stage (encoding dominates on CPU)."""


def folder_of(run: AlignmentRun) -> Path:
    """``MEDIA_ROOT/mining/<run id>-<created>/``: the creation time keeps a run from ever opening the
    folder of an earlier run that had the same id (a database reset while the media stayed)."""
    return Path(settings.MEDIA_ROOT) / "mining" / f"{run.pk}-{run.created_at:%Y%m%dT%H%M%S%f}"


# --- the plan ---------------------------------------------------------------------------------------

def layout(shards: int) -> list[list]:
    """``[stage, chunks]`` in order: a chunk per shard to encode, search and save, one to index and merge."""
    return [["encode", shards], ["index", 1], ["search", shards], ["merge", 1], ["save", max(1, shards)]]


def plan(run: AlignmentRun) -> Planned:
    """The run's job folder (created from the project's documents unless it exists) and its chunk rows."""
    folder = folder_of(run)
    work = MiningWork(folder) if MiningWork.exists(folder) else MiningWork.create(
        folder, project_documents(run.project), run_options.MiningRequest.parse(run.params).config,
        model=run_setup.encoder_of(run))
    stages = layout(work.n_shards)
    total = sum(n for _, n in stages)
    RunChunk.objects.bulk_create([RunChunk(run=run, index=i, work=[]) for i in range(total)], ignore_conflicts=True)
    return Planned(list(run.chunks.order_by("index")), int(work.plan["documents"]), {"stages": stages})


def project_documents(project) -> Iterator[CorpusDocument]:
    """Every document of the project with its sentences (id = the document's primary key)."""
    language = project.language or "en"
    for doc_id, sentences in stream_sentences(document__article__project=project):
        yield CorpusDocument(str(doc_id), tuple(s.text for s in sentences), language)


def stages_of(run: AlignmentRun) -> list[tuple[str, range]]:
    """Each stage with its chunks' indices (from the plan stored in the run's checkpoint)."""
    out, start = [], 0
    for stage, n in (run.checkpoint or {}).get("stages", []):
        out.append((stage, range(start, start + n)))
        start += n
    return out


def stage_of(run: AlignmentRun, index: int) -> tuple[str, int, range]:
    """The stage of chunk ``index``, its part within the stage, and the stage's indices."""
    for stage, indices in stages_of(run):
        if index in indices:
            return stage, index - indices.start, indices
    raise LookupError(f"run #{run.pk} has no chunk {index}")


def _left(run: AlignmentRun) -> list[int]:
    return list(RunChunk.objects.filter(run=run).exclude(status=Status.SUCCEEDED).order_by("index")
                .values_list("index", flat=True))


def due(run: AlignmentRun, left: list[int]) -> list[int]:
    """Of the unfinished chunks ``left``, those of the first stage not done (the stages before it are)."""
    if not left:
        return []
    indices = stage_of(run, min(left))[2]
    return [i for i in left if i in indices]


def ready(run: AlignmentRun, index: int) -> bool:
    return index in due(run, _left(run))


def then(run: AlignmentRun, chunk: RunChunk) -> list[int]:
    """The chunks to send now that ``chunk`` is done: the next stage's, if it completed its own."""
    left = _left(run)
    return [] if any(i in stage_of(run, chunk.index)[2] for i in left) else due(run, left)


def queue(run: AlignmentRun, index: int) -> str:
    """Encoding runs the encoder (the run's queue, gpu by default); the rest is ``cpu`` work."""
    return run.queue if stage_of(run, index)[0] == "encode" else Queue.CPU.value


# --- one chunk --------------------------------------------------------------------------------------

def run_part(run: AlignmentRun, chunk: RunChunk) -> dict:
    """One chunk's work: an engine stage's chunk (skipped if its file exists), or a slice of the pairs saved."""
    stage, part, indices = stage_of(run, chunk.index)
    progress.check_cancelled(AlignmentRun, run.pk)
    work = MiningWork(folder_of(run))
    if stage == "save":
        return save_part(run, work, part, len(indices))
    work.run_chunk(stage, part)
    return {"stage": stage, "pairs": 0, "seconds": {f"{stage}_s": work.chunk_info(stage, part).get("seconds", 0.0)}}


def save_part(run: AlignmentRun, work: MiningWork, part: int, parts: int) -> dict:
    """Write slice ``part`` of ``parts`` of the mined pairs as sentence pairs with this run's predictions."""
    t0 = time.perf_counter()
    size = math.ceil(work.n_pairs() / parts)
    pairs = list(work.pairs(part * size, (part + 1) * size))
    groups: dict[tuple[str, str], list[CorpusPair]] = defaultdict(list)
    for p in pairs:
        groups[(p.complex.document, p.simple.document)].append(p)
    doc_ids = {int(d) for key in groups for d in key}
    documents = Document.objects.select_related("article").in_bulk(doc_ids)
    sentences = {d.id: d.sentences for d in work.documents if int(d.id) in doc_ids}
    access = run_setup.access_scorer(run)
    progress.check_cancelled(AlignmentRun, run.pk)
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
    return {"stage": "save", "pairs": written, "seconds": {"save_s": round(time.perf_counter() - t0, 4)},
            "missing_features": dict(access.skipped) if access is not None else {}}


# --- progress and result ----------------------------------------------------------------------------

def report(run_id: int) -> None:
    """Progress: the weighted share of each stage's chunks done, and a message naming the current stage."""
    run = AlignmentRun.objects.get(pk=run_id)
    states = dict(RunChunk.objects.filter(run_id=run_id).values_list("index", "status"))
    done, message = 0.0, "mining: done"
    for stage, indices in stages_of(run):
        finished = sum(states.get(i) == Status.SUCCEEDED for i in indices)
        done += WEIGHTS[stage] * (finished / len(indices) if indices else 1.0)
        if finished < len(indices) and message == "mining: done":
            message = f"mining: {stage} {finished}/{len(indices)} chunks"
    written = Prediction.objects.filter(run_id=run_id).count()
    AlignmentRun.objects.filter(pk=run_id, status=Status.RUNNING).update(
        progress=round(100.0 * min(done, 0.999), 1), pair_count=written, message=f"{message} · {written} pairs written")


def result(run: AlignmentRun) -> tuple[dict, dict]:
    """The finished run's result and per-stage timings (summed over its chunks; who ran them), from its
    chunks and its job folder; the bulky files go unless ``keep_files``."""
    work = MiningWork(folder_of(run))
    stats = dict(RunChunk.objects.filter(run=run).values_list("index", "stats"))
    workers = dict(RunChunk.objects.filter(run=run).values_list("index", "worker"))
    stages: dict[str, dict] = {}
    timings: dict[str, float] = {"plan_s": work.plan.get("plan_seconds", 0.0)}
    for stage, indices in stages_of(run):
        seconds = sum((stats[i] or {}).get("seconds", {}).get(f"{stage}_s", 0.0) for i in indices)
        timings[f"{stage}_s"] = round(seconds, 3)
        stages[stage] = {"chunks": len(indices), "workers": sorted({workers[i] for i in indices})}
    timings["total_s"] = run_result.total_seconds(run)
    missing = {k: v for s in stats.values() for k, v in (s or {}).get("missing_features", {}).items()}
    out = {
        "documents": work.plan["documents"], "sentences": work.plan["sentences"],
        "sequences": work.plan["sequences"], "shards": work.plan["shards"], "index": work.plan["index"],
        "mined_pairs": work.n_pairs(), "mining": work.stats(), "stages": stages,
        "chunks": run_result.chunk_summary(run.pk), **run_result.describe(run, missing=missing),
    }
    if not run_options.MiningRequest.parse(run.params).keep_files:
        work.remove_intermediates()
    return out, timings


EXECUTOR = Executor(plan=plan, run=run_part, report=report, result=result, due=due, ready=ready, then=then, queue=queue)
"""A mining run on the one executor (:mod:`.run_chunks`)."""
