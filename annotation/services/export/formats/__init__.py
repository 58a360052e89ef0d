"""Registry of export formats: one module per format in this package.

A format module defines a :class:`~annotation.services.export.formats.base.Writer` subclass and
decorates it with ``@register("name", label=..., readme=...)``. Every module in this package is
imported on first lookup, so adding a format is adding a file (and its tests): the export page's
checkboxes, the API's and the command's validation, the job's writers and the export's README.txt
all read :func:`formats`.

Example:
    >>> [f.name for f in formats()]  # doctest: +SKIP
    ['tsv', 'parallel', 'jsonl', 'articles', 'hf']
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from annotation.plugins import Registry

if TYPE_CHECKING:
    from annotation.services.export.formats.base import Writer


@dataclass(frozen=True)
class ExportFormat:
    """One registered format: its name (options, API), the label the export page shows, the lines
    README.txt gives its files (``folder/*.ext   what they hold``), its writer class, list order and
    whether it is exact: a research data format writing every text as stored (``True``), or one meant
    for spreadsheets, whose cells go through :func:`~annotation.services.export.spreadsheet.spreadsheet_cell`;
    and whether it is a training-oriented output (``training``: pairs to train on, not gold; the
    training-only filters such as "drop identical" apply to it, see ``filters.py``); ``reimport``: the import
format that reads its folder back as gold (None: it is not read back), ``reimport_meaning``: what that gold
then means (the manifest's ``reimport``, README.txt)."""

    name: str
    label: str
    readme: str
    writer: type[Writer]
    order: int
    exact: bool = True
    training: bool = False
    reimport: str | None = None
    reimport_meaning: str = ""


_FORMATS: Registry[ExportFormat] = Registry("export format", __name__, __path__, identity=lambda f: f.writer,
                                             order=lambda name, f: (f.order, name))


def register(name: str, *, label: str | None = None, readme: str, order: int = 100, exact: bool = True,
             training: bool = False, reimport: str | None = None,
             reimport_meaning: str = "") -> Callable[[type[Writer]], type[Writer]]:
    """Class decorator adding a writer as format ``name`` (``order``: its place in lists, lower first)."""

    def wrap(writer: type[Writer]) -> type[Writer]:
        _FORMATS.add(name, ExportFormat(name, label or name, readme, writer, order, exact, training, reimport,
                                        reimport_meaning))
        return writer

    return wrap


# the registry's reads, by the names callers use: formats() in list order, names(), get(name) (UnknownName,
# a KeyError, when none is called so) and unregister(name) (tests that register a format of their own)
formats, names, get, unregister = _FORMATS.entries, _FORMATS.names, _FORMATS.get, _FORMATS.remove
