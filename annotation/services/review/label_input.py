"""A label's input, validated once at the edge (the view, the article editor, a test) into a
:class:`LabelInput`; the gate (``labelling``) and the queue receive that object, never raw values.

The rules, all here, the same on every path that writes a label (the queue's submit, ``POST`` and
``PATCH /api/labels/``, the whole-article links save): ``value`` and ``comment`` are strings, their
surrounding whitespace trimmed (``" aligned"`` is ``aligned`` everywhere); the value must be a label of
the project's scheme and ``ratings`` fit its kind (:meth:`annotation.label_schemes.SchemeKind.validate`);
no string may hold NUL or a lone surrogate or be longer than the scheme declares
(``SchemeKind.value_chars`` / ``comment_chars``, counted after trimming); ``seconds`` is a finite number
of at most a day. Anything else raises :class:`LabelInputError`. The API's serializers only declare the
fields' JSON types (``serializers.LabelInputFields``, one declaration for every endpoint) and hand the
validated data to :meth:`LabelInput.from_data`.
"""
from __future__ import annotations

import math
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

from annotation.errors import DomainError
from annotation.label_schemes import InvalidValue, scheme_kind
from annotation.models import Label, LabelScheme
from annotation.validation import text_problem

MAX_SECONDS = 86400.0  # a day on one item is a client bug, not a measurement


class LabelInputError(DomainError, ValueError):
    """The label's input is invalid (the message says which field and why)."""


def clean_text(name: str, value, limit: int) -> str:
    """``value`` without its surrounding whitespace, if it is a string that PostgreSQL and SQLite both
    store faithfully and fits ``limit``; else LabelInputError."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise LabelInputError(f"{name}: must be a string")
    value = value.strip()
    problem = text_problem(value)  # the app-wide rule: no NUL, no lone surrogate
    if problem:
        raise LabelInputError(f"{name}: {problem}")
    if len(value) > limit:
        raise LabelInputError(f"{name}: at most {limit} characters (got {len(value)})")
    return value


def clean_seconds(seconds) -> float:
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds):
        raise LabelInputError("seconds: must be a finite number")
    if not 0 <= seconds <= MAX_SECONDS:
        raise LabelInputError(f"seconds: must be between 0 and {MAX_SECONDS:g}")
    return float(seconds)


@dataclass(frozen=True)
class LabelInput:
    """One label as the annotator gave it, valid for its scheme: build it with :meth:`parse`.

    ``client_token`` makes a resubmission idempotent; ``change`` asks to replace a different label
    given before (else ``labelling.LabelConflict``)."""

    value: str = ""
    ratings: dict = field(default_factory=dict)
    comment: str = ""
    seconds: float = 0.0
    client_token: uuid.UUID | None = None
    change: bool = False

    @classmethod
    def parse(cls, scheme: LabelScheme, *, value="", ratings=None, comment="", seconds=0.0,
              client_token: uuid.UUID | None = None, change: bool = False) -> LabelInput:
        """The validated input for a label of ``scheme`` from keyword fields (code: the article editor, tests);
        raises LabelInputError. The request's fields go through :meth:`from_data`, which holds the rules.

        Example:
            >>> from annotation.models import Label, LabelScheme
            >>> scheme = LabelScheme(kind="categorical", values=[{"value": "aligned"}, {"value": "not-aligned"}])
            >>> LabelInput.parse(scheme, value="aligned", comment="tense", seconds=12).content()
            {'value': 'aligned', 'ratings': {}, 'comment': 'tense', 'seconds': 12.0}
            >>> LabelInput.parse(scheme, value="maybe")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            annotation.services.review.label_input.LabelInputError: value: 'maybe' is not a label of scheme ''; choose one of: ...
        """
        return cls.from_data(scheme, {"value": value, "ratings": ratings, "comment": comment, "seconds": seconds,
                                      "client_token": client_token, "change": change})

    @classmethod
    def from_data(cls, scheme: LabelScheme, data: Mapping, *, editing: Label | None = None) -> LabelInput:
        """The input from a request's fields (``value``, ``ratings``, ``comment``, ``seconds``,
        ``client_token``, ``change``; a field left out or null takes its default), checked by the rules above.

        ``editing``: the stored label an edit changes ("My labels", ``PATCH /api/labels/<id>/``): a comment
        left out (or null) keeps the label's, and the label keeps its seconds (an edit is not timed).

        Example:
            >>> from annotation.models import LabelScheme
            >>> scheme = LabelScheme(kind="categorical", values=[{"value": "aligned"}, {"value": "not-aligned"}])
            >>> LabelInput.from_data(scheme, {"value": " aligned", "comment": None}).content()
            {'value': 'aligned', 'ratings': {}, 'comment': '', 'seconds': 0.0}
        """
        comment, seconds = data.get("comment"), data.get("seconds")
        if editing is not None:
            comment, seconds = editing.comment if comment is None else comment, editing.seconds
        seconds, value, ratings = 0.0 if seconds is None else seconds, data.get("value"), data.get("ratings")
        client_token, change = data.get("client_token"), data.get("change")
        kind = scheme_kind(scheme)
        value, comment = (clean_text(name, text, limit) for name, text, limit in
                          (("value", value, kind.value_chars), ("comment", comment, kind.comment_chars)))
        if ratings is None:
            ratings = {}
        if not isinstance(ratings, dict):
            raise LabelInputError("ratings: must be an object of {dimension: rating}")
        try:
            ratings = kind.validate(scheme, value, ratings)
        except InvalidValue as exc:
            raise LabelInputError(str(exc)) from exc
        return cls(value, ratings, comment, clean_seconds(seconds), client_token, bool(change))

    def content(self) -> dict:
        """The label's stored content fields: ``value``, ``ratings``, ``comment``, ``seconds``."""
        return {k: v for k, v in asdict(self).items() if k not in ("client_token", "change")}


def validate_value(scheme: LabelScheme, value: str, ratings: dict | None) -> dict:
    """The label's stored ratings once ``value``/``ratings`` are valid for ``scheme``; raises LabelInputError."""
    return LabelInput.parse(scheme, value=value, ratings=ratings).ratings
