"""The one registry class of the application: import formats, export formats and label-scheme kinds
(and the engine's alignment methods) each live in one module per entry that registers itself in a
:class:`Registry`, which imports its whole package once, on first use.

The class is the engine's (:mod:`workers.engine.registry`, Django-free, so the engine's methods use
it too); this module is where the application takes it from.
"""
from __future__ import annotations

from workers.engine import Registry, UnknownName

__all__ = ["Registry", "UnknownName"]
