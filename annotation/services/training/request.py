"""A training request, declared once and parsed once at the edge into a :class:`TrainRequest`.

The API (``POST /api/projects/<p>/train/``), the Models page (its form is drawn from these declarations and the
engine's :data:`~workers.engine.TRAIN_PARAMS`) and ``manage.py train_aligner`` each call
:meth:`TrainRequest.parse` once; :func:`~annotation.services.training.versions.start_training` takes the parsed
object, and the job trains with its ``config``.

Example:
    >>> TrainRequest.parse({"config": {"epochs": 1}, "seed": 3})
    TrainRequest(config={'epochs': 1}, seed=3, base_version=None)
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from annotation.requests import BadOptions, Option, parse_request
from annotation.services.training.dataset import TrainingError
from annotation.validation import MAX_ID
from workers.engine import TRAIN_PARAMS, describe


class TrainRequestError(BadOptions, TrainingError):
    """A training option refused (``problems``: option → why); nothing is queued."""


TRAIN_REQUEST_OPTIONS: tuple[Option, ...] = (
    Option("config", "object", None, nullable=True, options=TRAIN_PARAMS,
           help="training options, as the engine declares them (TRAIN_PARAMS); absent ones take their defaults"),
    Option("seed", "int", 0, 0, 2**31 - 1, help="random seed of the training"),
    Option("base_version", "int", None, 1, MAX_ID, nullable=True,
           help="id of the project's model version to start from (default: the project's default version)"),
)


@dataclass(frozen=True)
class TrainRequest:
    """A parsed training request: the engine options given (checked), the seed, the model version to start from."""

    config: dict = field(default_factory=dict)
    seed: int = 0
    base_version: int | None = None

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None, *, text: bool = False) -> TrainRequest:
        """Raises :class:`TrainRequestError` naming every bad option (a training option under ``config``)."""
        parsed = parse_request(cls, "training request", TRAIN_REQUEST_OPTIONS, raw, text=text,
                               error=TrainRequestError.of)
        return cls(parsed.config or {}, parsed.seed, parsed.base_version)


def form_fields() -> list[dict[str, Any]]:
    """What the Models page's training form draws: every training option (name, type, range, default, help,
    choices), read from the engine's declarations, so the form, the API and the CLI cannot drift apart."""
    return describe(TRAIN_PARAMS)


def seed_field() -> dict[str, Any]:
    """The request's ``seed`` option, for the form."""
    return next(o for o in TRAIN_REQUEST_OPTIONS if o.name == "seed").as_dict()
