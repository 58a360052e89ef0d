"""JSON command-line arguments, held to the API's rules (:mod:`annotation.validation`).

Python's ``json.loads`` takes ``NaN``, ``Infinity`` and ``1e999`` (as infinity) and lone surrogates
(``"\\ud800"``, or undecodable bytes in ``argv``); none of them can be stored (jsonb refuses them,
UTF-8 cannot encode them), so the commands refuse them up front, as the API's parser does, with a
:class:`~django.core.management.CommandError` naming the option and where in it the problem is.

    >>> json_object('{"epochs": 2}', "--config")
    {'epochs': 2}
    >>> json_object('{"threshold": NaN}', "--params")
    Traceback (most recent call last):
    ...
    django.core.management.base.CommandError: --params: NaN is not valid JSON
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from django.core.management.base import CommandError

from annotation import validation
from annotation.parsers import load_json


def json_object(raw: str, option: str) -> dict[str, Any]:
    """``raw`` parsed as a JSON object, strictly (:func:`annotation.parsers.load_json`).

    Raises:
        CommandError: not JSON, not an object, a non-finite number, a 64-bit overflow, or text
            that cannot be stored; the message starts with ``option``.
    """
    try:
        return load_json(raw, what=option)
    except validation.InputError as exc:
        raise CommandError(str(exc)) from None


def checked(data: Any, option: str) -> Any:
    """``data`` (options assembled from JSON and flags) unchanged when it could be stored.

    Raises:
        CommandError: ``"<option><path>: <why>"``, e.g. ``options.thresholds[0].value: number out
            of range (not finite)`` for a ``--threshold`` of ``1e999``.
    """
    found = validation.first_problem(data)
    if found is None:
        return data
    path, why = found
    where = option + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path)
    raise CommandError(f"{where}: {why}")


@contextlib.contextmanager
def refused_as_command_error() -> Iterator[None]:
    """A refusal (a ``ValueError``: a bad option, an unknown project...) inside becomes a
    :class:`~django.core.management.CommandError` with its message."""
    try:
        yield
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
