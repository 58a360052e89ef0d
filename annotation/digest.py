"""A short, stable digest of JSON-able marks: the cache keys of aggregates kept per state of the data.

The dashboard (``review_state``), the training set (``training.current``, ``training.dataset``), the
export preview and a comparison of two finished runs each key what they keep by a digest of cheap marks
of what they read; this is the one way such a digest is made.

Example:
    >>> digest([1, {"b": 2, "a": None}]) == digest([1, {"a": None, "b": 2}])
    True
    >>> len(digest(["x"], length=16))
    16
"""
from __future__ import annotations

import hashlib
import json


def digest(parts: object, *, length: int = 24) -> str:
    """The first ``length`` hex digits of the SHA-256 of ``parts`` as JSON (keys sorted; dates and other
    values as their ``str``)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:length]
