"""Running a corpus mining job on this machine: every chunk in order, in one or several processes."""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .config import MiningConfig
from .folder import STAGES
from .records import CorpusDocument, CorpusPair
from .work import MiningWork

__all__ = ["run_local", "mine_corpus"]


def _pool_init(model: str | None, device: str | None, threads: int) -> None:
    import faiss
    import torch

    torch.set_num_threads(max(1, threads))
    faiss.omp_set_num_threads(max(1, threads))
    from ..simplicity.embedding import default_encoder

    default_encoder(model, device)  # load once per worker, before any stage is timed


def _pool_ready(_: int) -> int:
    time.sleep(0.2)  # long enough for the other workers to take the other items
    return os.getpid()


def _pool_run(args: tuple[str, str, int]) -> bool:
    folder, stage, chunk = args
    work = _WORKS.get(folder)
    if work is None:
        work = _WORKS[folder] = MiningWork(folder)
    return work.run_chunk(stage, chunk)


_WORKS: dict[str, MiningWork] = {}


def run_local(work: MiningWork, *, encoder: Any = None, workers: int = 1,
              progress: Callable[[float, str], None] | None = None) -> dict[str, float]:
    """Run every missing chunk of a job on this machine; returns wall seconds per stage.

    ``workers`` > 1 runs each stage's chunks in that many processes (each loads the job's encoder
    once and gets ``cores / workers`` threads), the way several Celery workers would; ``encoder``
    applies to ``workers=1`` only (tests pass a stand-in).
    """
    seconds: dict[str, float] = {}
    pool = None
    if workers > 1:
        import multiprocessing as mp

        threads = max(1, (os.cpu_count() or 1) // workers)
        pool = mp.get_context("spawn").Pool(workers, initializer=_pool_init,
                                            initargs=(work.model, work.config.device, threads))
        # every worker has loaded the encoder before the first stage is timed
        started: set[int] = set()
        for _ in range(20):
            started |= set(pool.map(_pool_ready, range(workers), chunksize=1))
            if len(started) >= workers:
                break
    try:
        for n, stage in enumerate(STAGES):
            todo = work.missing(stage)
            t0 = time.perf_counter()
            if pool is not None and todo:
                pool.map(_pool_run, [(str(work.folder), stage, c) for c in todo], chunksize=1)
            else:
                for c in todo:
                    work.run_chunk(stage, c, encoder=encoder)
            seconds[stage] = round(time.perf_counter() - t0, 3)
            if progress is not None:
                progress((n + 1) / len(STAGES), f"mine: {stage} done ({len(todo)} chunks, {seconds[stage]:.1f}s)")
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    return seconds


def mine_corpus(documents: Sequence[CorpusDocument], config: MiningConfig | Mapping[str, Any] | None = None, *,
                model: str | None = None, encoder: Any = None, folder: str | Path | None = None,
                workers: int = 1, progress: Callable[[float, str], None] | None = None) -> list[CorpusPair]:
    """Mine paraphrase pairs across a whole corpus (MUSS §3.1); the job runs in ``folder`` (kept,
    and resumed if it exists) or in a temporary folder.

    """
    cfg = config if isinstance(config, MiningConfig) else MiningConfig.from_dict(config)
    if folder is None:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="mine-") as tmp:
            return mine_corpus(documents, cfg, model=model, encoder=encoder, folder=tmp, workers=workers,
                               progress=progress)
    work = MiningWork.create(folder, documents, cfg, model=model)
    run_local(work, encoder=encoder, workers=workers, progress=progress)
    return list(work.pairs())
