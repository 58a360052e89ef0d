"""The registry of scoring kinds: one module per kind in this package, each declaring everything about itself.

A kind module defines its runner ``run(job, report) -> result`` and registers a :class:`ScoringKind`:
its options (the engine's :class:`~workers.engine.Option` schema: types, ranges, defaults and help
once), whether it needs a reference corpus, what only it checks, its queue and Celery task name,
and its feature-key prefix. :mod:`annotation.services.scoring.jobs` parses a request against it,
its registration adds its job kind to the background registry, the
``score_pairs`` command lists it, so adding a scoring kind is adding a file here (and its tests).

Example:
    >>> [k.name for k in kinds()]  # doctest: +SKIP
    ['access-attributes', 'sum4simp-filter', 'wivico-thresholds', 'gain-classifier', 'pivot-select']
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from annotation.plugins import Registry
from annotation.services.background import registry
from workers.engine import Option

if TYPE_CHECKING:
    from annotation.models import Job, Project
    from annotation.services.scoring.common import ProgressFn


@dataclass(frozen=True)
class ProjectRef(Option):
    """A project named by its name or id (a reference corpus); stored as its id once checked."""

    def problem(self, value: Any) -> str | None:
        if value is None or (isinstance(value, int | str) and not isinstance(value, bool)):
            return None
        return f"must be a project name or id, got {value!r}"


COMMON_OPTIONS: tuple[Option, ...] = (
    Option("run", "int", None, min=1, nullable=True, help="score only the pairs of this alignment run"),
    Option("origin", "str", None, nullable=True, help="score only the pairs of this origin "
                                                      "(model, candidate, manual, derived, import)"),
)
"""The options every kind takes: which pairs it scores."""

REFERENCE_OPTIONS: tuple[Option, ...] = (
    ProjectRef("reference_project", "str", None, nullable=True,
               help="imported pair corpus (name or id) to fit or train on"),
    Option("model_version", "int", None, min=1, nullable=True,
           help="a model version of this kind fitted before (instead of reference_project)"),
)
"""The options of a kind that fits a model on a reference corpus (``needs_reference``): one of them is given."""


@dataclass(frozen=True)
class ScoringKind:
    """One scoring kind.

    Attributes:
        name: the job kind (``Job.kind``), the API's and the command's ``kind``.
        doc: one line for lists and the background registry.
        run: the runner, called in the worker as ``run(job, report)``; returns the job's result.
        options: the kind's own options (besides :data:`COMMON_OPTIONS`, and :data:`REFERENCE_OPTIONS`
            when ``needs_reference``).
        needs_reference: it fits a model: ``reference_project`` or ``model_version`` (a version of this kind).
        queue: ``cpu`` or ``gpu`` (a neural model).
        task: the Celery task's name in ``workers.tasks``.
        prefix: the feature keys it owns (removed and rewritten on every run; blank: it writes none).
        check: what only this kind checks of a request, ``check(project, params)``; raises
            :class:`~annotation.services.scoring.jobs.ScoringRefused`.
        order: its place in lists (lower first).
    """

    name: str
    doc: str
    run: Callable[[Job, ProgressFn], dict]
    options: tuple[Option, ...] = ()
    needs_reference: bool = False
    queue: str = "cpu"
    task: str = ""
    prefix: str = ""
    check: Callable[[Project, dict], None] | None = None
    order: int = 100

    def schema(self) -> tuple[Option, ...]:
        """Every option a request of this kind may give."""
        return (*COMMON_OPTIONS, *(REFERENCE_OPTIONS if self.needs_reference else ()), *self.options)


_KINDS: Registry[ScoringKind] = Registry("scoring kind", __name__, __path__, identity=lambda k: k.run,
                                         order=lambda name, k: (k.order, name))


SERVICE = "annotation.services.scoring.jobs.run_scoring_job"
"""Every scoring kind's background service (it runs the job's kind)."""


def register(kind: ScoringKind) -> ScoringKind:
    """Add ``kind`` under its name, and its job kind to the background registry (a kind module calls it once)."""
    _KINDS.add(kind.name, kind)
    registry.register_job(kind.name, registry.Work(registry.task_name(kind.task), SERVICE, registry.Queue(kind.queue),
                                                   kind.doc))
    return kind


def unregister(name: str) -> None:
    """Forget the kind called ``name`` and its job kind (tests that register a kind of their own)."""
    _KINDS.remove(name)
    registry.unregister_job(name)


# the registry's reads: kinds() in list order, names(), get(name) (UnknownName listing the kinds)
kinds, names, get, load = _KINDS.entries, _KINDS.names, _KINDS.get, _KINDS.load
