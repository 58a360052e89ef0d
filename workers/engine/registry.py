"""The one registry class: named entries that register themselves, one module per entry.

The engine's alignment methods and the application's import formats, export formats and label-scheme
kinds are each a :class:`Registry`: a package whose modules each add one entry when imported. The
registry imports every module of its package once, on first read, so adding an entry is adding a file.
It refuses a name registered twice by a different entry and answers an unknown name with
:class:`UnknownName` listing the valid ones. Django-free (the engine uses it; ``annotation.plugins``
re-exports it for the application).

Example:
    >>> colours = Registry("colour")
    >>> colours.add("red", "#f00")
    >>> colours.get("red"), colours.names()
    ('#f00', ('red',))
    >>> colours.get("blue")
    Traceback (most recent call last):
    ...
    workers.engine.registry.UnknownName: unknown colour 'blue'; choose one of: red
"""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

__all__ = ["Registry", "UnknownName"]

T = TypeVar("T")


class UnknownName(KeyError, ValueError):
    """No entry has this name: a ``KeyError`` (a lookup) and a ``ValueError`` (a bad argument) whose
    message lists the valid names."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class Registry(Generic[T]):
    """Entries of one kind by name.

    Args:
        what: what an entry is, for messages (``"method"``, ``"import format"``).
        package, path: the package whose modules register the entries (``__name__``, ``__path__``),
            imported on first read (no ``path``: the package's own, found then, for a registry declared
            outside its package); none for a registry filled by hand.
        identity: what makes two registrations the same entry (default: the entry itself, compared by ==); the same
            entry registered again (a module imported twice) replaces itself, another one is an error.
        order: the sort key of :meth:`entries` (default: the name).
    """

    def __init__(self, what: str, package: str | None = None, path: Iterable[str] = (), *,
                 identity: Callable[[T], Any] | None = None, order: Callable[[str, T], Any] | None = None) -> None:
        self.what = what
        self._package = package
        self._path = list(path)
        self._identity = identity or (lambda entry: entry)
        self._order = order or (lambda name, entry: name)
        self._entries: dict[str, T] = {}
        self._loaded = package is None

    def add(self, name: str, entry: T) -> None:
        """Register ``entry`` as ``name``; ``ValueError`` when another entry holds the name."""
        known = self._entries.get(name)
        if known is not None and self._identity(known) != self._identity(entry):
            raise ValueError(f"{self.what} {name!r} registered twice")
        self._entries[name] = entry

    def registered(self) -> dict[str, T]:
        """The entries registered so far, without importing the package (for checks while registering)."""
        return dict(self._entries)

    def remove(self, name: str) -> None:
        """Forget ``name`` (tests that register an entry of their own)."""
        self._entries.pop(name, None)

    def load(self) -> None:
        """Import every module of the package once (each registers its entries)."""
        if self._loaded:
            return
        path = self._path or list(importlib.import_module(self._package).__path__)
        for info in pkgutil.iter_modules(path):
            importlib.import_module(f"{self._package}.{info.name}")
        self._loaded = True

    def get(self, name: str) -> T:
        """The entry called ``name``; :class:`UnknownName` (listing the valid names) when none is."""
        self.load()
        try:
            return self._entries[name]
        except KeyError:
            raise UnknownName(f"unknown {self.what} {name!r}; choose one of: {', '.join(self.names())}") from None

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self._entries

    def entries(self) -> list[T]:
        """Every entry, in list order."""
        return [entry for _, entry in self.items()]

    def items(self) -> list[tuple[str, T]]:
        """``(name, entry)`` of every entry, in list order."""
        self.load()
        return sorted(self._entries.items(), key=lambda item: self._order(*item))

    def names(self) -> tuple[str, ...]:
        """Every name, in list order."""
        return tuple(name for name, _ in self.items())
