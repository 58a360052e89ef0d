"""Alignment runs: validate and queue them, or execute one in this process.

A run is a plan of chunks (:mod:`annotation.services.alignment.run_chunks`, the one executor):
workers share its chunks, and :func:`execute_run` (``manage.py align --now``, tests) runs the same
plan inline. Its parts, used by every run: setup (:mod:`.run_setup`), work list (:mod:`.run_work`),
saving (:mod:`.run_saving`) and result (:mod:`.run_result`); other areas import those names from them.
"""
from __future__ import annotations

from annotation.errors import DomainError
from annotation.models import AlignmentRun, Project
from annotation.services import audit
from annotation.services.alignment import run_chunks, run_options
from annotation.services.background import jobs
from annotation.services.background.registry import Queue


class RunRequestError(DomainError, ValueError):
    """A run refused before it is created: an unknown method or queue, malformed params or level pairs, a level
    the project does not have (``code`` says which)."""


def start_run(project: Project, method: str, *, params: dict | None = None, level_pairs: list | None = None,
              model_version=None, user=None, queue: str = Queue.GPU.value, enqueue: bool = True) -> AlignmentRun:
    """Create an alignment run and queue it (on the gpu queue by default; it falls back to CPU)."""
    methods = run_options.available_methods()
    if method not in methods:
        raise RunRequestError(f"unknown method {method!r}; choose one of: {', '.join(methods)}", code="unknown_method")
    if queue not in {q.value for q in Queue}:
        raise RunRequestError(f"unknown queue {queue!r}; choose one of: {', '.join(q.value for q in Queue)}",
                              code="unknown_queue")
    if params is not None and not isinstance(params, dict):
        raise RunRequestError("params must be a JSON object", code="bad_params")
    for pair in level_pairs or []:
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
            raise RunRequestError("level_pairs must be a list of [complex_level, simple_level] pairs", code="bad_level_pairs")
    _check_levels(project, level_pairs or [])
    # a bad option (skip_articles included), a model path or another project's model fails here, not in a worker
    run_options.check(project, method, params or {}, model_version)
    if model_version is None and method == "crf":
        model_version = run_options.default_version(project)  # the version a researcher promoted, if any
    run = AlignmentRun.objects.create(project=project, method=method, params=params or {}, level_pairs=level_pairs or [],
                                      model_version=model_version, created_by=user, queue=queue)
    audit.record("run.start", actor=user, project=project, target=f"run #{run.pk}", method=method)
    if enqueue:
        jobs.enqueue_run(run)
    return run


def _check_levels(project: Project, level_pairs: list) -> None:
    """Refuse a level the project's documents do not have (a typo would align nothing and "succeed"),
    naming the valid levels."""
    if not level_pairs:
        return
    from annotation.models import Document

    levels = set(Document.objects.filter(article__project=project).values_list("level", flat=True).distinct())
    unknown = sorted({level for pair in level_pairs for level in pair} - levels)
    if unknown:
        valid = ", ".join(sorted(levels)) or "none: the project has no documents yet"
        raise RunRequestError(f"unknown level{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} in "
                              f"level_pairs; the project's levels are: {valid}", code="unknown_level")
    same = [pair for pair in level_pairs if pair[0] == pair[1]]
    if same:
        raise RunRequestError(f"level pair {list(same[0])} aligns a level with itself; give [complex_level, simple_level]",
                              code="bad_level_pairs")


def execute_run(run_id: int) -> None:
    """Run the whole plan of run ``run_id`` in this process (see :func:`.run_chunks.run_inline`)."""
    run_chunks.run_inline(run_id)


__all__ = ["RunRequestError", "start_run", "execute_run"]
