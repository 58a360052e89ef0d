"""Registry of alignment methods: one file per method in this package.

A method module defines a class implementing :class:`Aligner` and decorates it with
``@register("name")``. Every module in this package is imported on first lookup, so adding
a method is adding a file.

What an application needs to know of a method besides its options is plain data on its class, read by
:func:`method_facts` (:class:`MethodFacts`): ``model_kinds`` (the kinds of trained model it can load),
``calibrated_options`` (which option a threshold calibrated on labels sets, per class) and
``project_keys`` (settings a project stores for the method, used unless a run sets them), so no
table elsewhere is keyed by method names.

A method whose decisions depend on the whole run (WIVICO: its n:m cut-offs come from window means
over every article pair) also implements :class:`RunLevelAligner`: a caller that aligns one run in
several ``align`` calls (the application's batches) first calls ``prepare`` once with every
article pair of the run, so no article's result depends on the batch it lands in. A single
``align`` call without ``prepare`` is one run by itself (the ``align`` CLI over a whole file).
"""
from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..options import Option, check_config
from ..registry import Registry
from ..types import Alignment, ArticlePair

ProgressFn = Callable[[float, str], None]


class Aligner(Protocol):
    """What every method provides."""

    name: str

    def align(
        self, pairs: Sequence[ArticlePair], progress: ProgressFn | None = None
    ) -> list[Alignment]:
        """Align each article pair; call ``progress(fraction_done, message)`` as work advances."""
        ...


@runtime_checkable
class RunLevelAligner(Aligner, Protocol):
    """A method with run-level state, learned in a first pass over the whole run."""

    def prepare(
        self, pairs: Iterable[ArticlePair], progress: ProgressFn | None = None, total: int | None = None
    ) -> dict[str, Any]:
        """Learn the run-level state from **every** article pair of the run (streamed; ``total``, when
        known, scales the progress); later ``align`` calls use it. Returns it as JSON for the record.
        """
        ...


def is_run_level(aligner: object) -> bool:
    """Whether ``aligner`` needs :meth:`RunLevelAligner.prepare` before a run aligned in batches;
    ``aligner`` may be a method's name (its registered class is asked: nothing is loaded).

    Raises:
        ValueError: an unknown method name (the message lists the valid ones).
    """
    if isinstance(aligner, str):
        aligner = _METHODS.get(aligner)  # UnknownName (a ValueError) lists the valid ones
    return callable(getattr(aligner, "prepare", None))


_METHODS: Registry[Callable[..., Aligner]] = Registry("method", __name__, __path__)


def register(name: str) -> Callable[[Callable[..., Aligner]], Callable[..., Aligner]]:
    """Class decorator adding a method under ``name``."""

    def wrap(factory: Callable[..., Aligner]) -> Callable[..., Aligner]:
        _METHODS.add(name, factory)
        return factory

    return wrap


@dataclass(frozen=True)
class MethodFacts:
    """What the application reads about a method besides its options (class attributes of the same names).

    Attributes:
        model_kinds: the kinds of model version it can load (none: it uses no trained model).
        calibrated_options: label class (``aligned``, ``partial``) → the option a threshold calibrated on
            labels of an earlier run of the method sets.
        calibrated_partial_capped: a calibrated ``aligned`` cut-off without a ``partial`` one keeps the
            method's own partial cut-off, never above the new aligned one (the partial option must not
            exceed the aligned one).
        project_keys: options a project stores for the method (under ``config[<method>]``, written by a
            job such as ``wivico-thresholds``) that a run uses unless its own params set any of them.
    """

    model_kinds: tuple[str, ...] = ()
    calibrated_options: Mapping[str, str] = field(default_factory=dict)
    calibrated_partial_capped: bool = False
    project_keys: tuple[str, ...] = ()


def method_facts(name: str) -> MethodFacts:
    """The :class:`MethodFacts` of method ``name``, read from its registered class (nothing is loaded).

    Example:
        >>> method_facts("sbert").model_kinds
        ('bi-encoder',)

    Raises:
        ValueError: unknown method (the message lists the valid ones).
    """
    cls = _METHODS.get(name)
    return MethodFacts(**{f: getattr(cls, f) for f in MethodFacts.__dataclass_fields__ if hasattr(cls, f)})


unregister = _METHODS.remove  # tests that register a method of their own


def available_methods() -> list[str]:
    """Names of all registered methods, sorted."""
    return list(_METHODS.names())


def method_schema(name: str) -> tuple[Option, ...]:
    """The options of method ``name`` (its class's or else its module's ``PARAMS``): name, type, default, range, help.

    Example:
        >>> [o.name for o in method_schema("jaccard")]
        ['partial_threshold', 'aligned_threshold', 'margin', 'max_complex']

    Raises:
        ValueError: unknown method (the message lists the valid ones).
    """
    factory = _METHODS.get(name)
    return tuple(getattr(factory, "PARAMS", None) or getattr(sys.modules[factory.__module__], "PARAMS", ()))


def method_defaults(name: str) -> dict[str, Any]:
    """Every option of method ``name`` with its default (``None`` = computed by the method).

    Example:
        >>> method_defaults("tfidf")["partial_threshold"]
        0.2

    Raises:
        ValueError: unknown method (the message lists the valid ones).
    """
    return {o.name: o.default for o in method_schema(name)}


def check_method_config(name: str, config: dict[str, Any]) -> None:
    """Check ``config`` against :func:`method_schema` (unknown keys, types, ranges, choices).

    Raises:
        ValueError: unknown method; :class:`~workers.engine.options.OptionError` (a ValueError)
            listing every bad key and the valid options with their ranges.
    """
    check_config(name, method_schema(name), config)


def get_aligner(name: str, config: dict[str, Any] | None = None, model: str | None = None) -> Aligner:
    """Build the aligner ``name`` with a method-specific ``config`` dict and optional model path.

    Raises:
        ValueError: unknown method (the message lists the valid ones) or bad config
            (:class:`~workers.engine.options.OptionError`, listing the valid options).
    """
    check_method_config(name, dict(config or {}))
    return _METHODS.get(name)(config=dict(config or {}), model=model)
