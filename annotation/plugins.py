"""Loading self-registering modules: the import formats, export formats and label-scheme kinds each
live in one module per entry that registers itself when imported; their registry imports the whole
package once, on first use."""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable


class ModuleLoader:
    """``load()`` imports every module of package ``package`` (found on ``path``) once."""

    def __init__(self, package: str, path: Iterable[str]) -> None:
        self._package = package
        self._path = list(path)
        self._done = False

    def __call__(self) -> None:
        if self._done:
            return
        for info in pkgutil.iter_modules(self._path):
            importlib.import_module(f"{self._package}.{info.name}")
        self._done = True
