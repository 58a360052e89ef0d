"""Registry of import formats: one module per format in this package.

A format module defines ``parse(files, ctx)`` (yielding one :class:`ParsedArticle` at a time) and
decorates it with ``@register("name", extensions=(...), help="...", example=(...))``. Every module in this package
is imported on first lookup, so adding a format is adding a file (and its tests): ``--format auto``
(extensions), the API's and the command's format validation and the import page's list and help all
read :func:`formats`. A format whose files can't be told by their extensions alone (``newsela``'s
``articles_metadata.csv`` beside ``.txt`` files) also gives ``probe(names)``: ``auto`` picks it when it
claims the file names. A ``binary`` format (``hf``'s Arrow/parquet) is not checked as UTF-8 text. A
``record_files`` format reads each file as a list of independent records (``jsonl`` lines, ``wiki-manual``
rows): an empty file beside others holds none and is skipped, warned (an export's empty split).

Example:
    >>> [f.name for f in formats()]  # doctest: +SKIP
    ['jsonl', 'levels', 'stories', 'parallel', 'wiki-manual', 'newsela', 'hf']
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from annotation.plugins import Registry
from annotation.services.corpus.importing.base import InputFile, ParseContext, ParsedArticle, TextFile
from annotation.services.corpus.importing.problems import CorpusImportError, Problem
from annotation.services.corpus.importing.validation import is_ignorable

Parser = Callable[[list[InputFile], ParseContext], Iterator[ParsedArticle]]


@dataclass(frozen=True)
class ImportFormat:
    """One registered format: its name, the extensions ``auto`` recognises, its parser, the help
    line the import page shows (plain text) and a tiny example (``(file name, text)`` pairs) that
    imports cleanly, which the registry's tests import for every format; ``probe`` (optional) claims a
    set of file names for ``auto`` before extensions are looked at; ``binary``: its files are not text;
    ``record_files``: an empty file among non-empty ones holds no records and is skipped."""

    name: str
    extensions: tuple[str, ...]
    parse: Parser
    help: str
    order: int
    example: tuple[tuple[str, str], ...]
    probe: Callable[[list[str]], bool] | None = None
    binary: bool = False
    record_files: bool = False


_FORMATS: Registry[ImportFormat] = Registry("import format", __name__, __path__, identity=lambda f: f.parse,
                                             order=lambda name, f: (f.order, name))


def register(name: str, *, extensions: tuple[str, ...], help: str, example: tuple[tuple[str, str], ...],  # noqa: A002
             order: int = 100, probe: Callable[[list[str]], bool] | None = None,
             binary: bool = False, record_files: bool = False) -> Callable[[Parser], Parser]:
    """Decorator adding a parser as format ``name`` (``order``: its place in lists, lower first)."""

    def wrap(parse: Parser) -> Parser:
        known = _FORMATS.registered()
        if name in known and known[name].parse is not parse:  # a programming error: two modules claim one name
            raise ValueError(f"import format {name!r} registered twice")
        taken = {ext: f.name for f in known.values() if f.name != name for ext in f.extensions}
        clash = [ext for ext in extensions if ext in taken]
        if clash:  # a programming error (at import): two formats claim one extension
            raise ValueError(f"import format {name!r}: extension(s) {', '.join(clash)} already belong to "
                             f"{', '.join(sorted({taken[e] for e in clash}))}")
        _FORMATS.add(name, ImportFormat(name, tuple(extensions), parse, help, order, tuple(example), probe, binary,
                                        record_files))
        return parse

    return wrap


# the registry's reads, by the names callers use: formats() in list order, names(), get(name) (UnknownName,
# a KeyError, when none is called so) and unregister(name) (tests that register a format of their own)
formats, names, get, unregister = _FORMATS.entries, _FORMATS.names, _FORMATS.get, _FORMATS.remove


def probed(names: list[str]) -> str | None:
    """The format whose ``probe`` claims these file names (``auto``), if one does."""
    return next((f.name for f in formats() if f.probe is not None and f.probe(names)), None)


def by_extension() -> dict[str, str]:
    """File extension (no dot) → format name, for ``--format auto``."""
    return {ext: f.name for f in formats() for ext in f.extensions}


def _known_extensions() -> str:
    return ", ".join(f".{ext} ({fmt})" for ext, fmt in by_extension().items())


def detect_format(names: list[str]) -> str:
    """The format of a set of files, from their extensions.

    Raises:
        CorpusImportError: no files, an unknown extension, or files of several formats.
    """
    names = [n for n in names if not is_ignorable(n)]
    if not names:
        raise CorpusImportError.one("", "no files to import")
    claimed = probed(names)  # a layout told by its file names (newsela's metadata CSV, an HF dataset)
    if claimed is not None:
        return claimed
    found: dict[str, list[str]] = {}
    extension_formats = by_extension()
    unknown: list[Problem] = []
    for name in names:
        ext = TextFile(name, "").extension
        fmt = extension_formats.get(ext)
        if fmt is None:
            shown = f".{ext}" if ext else "(none)"
            unknown.append(Problem(name, None, None, f"unknown extension {shown}; known extensions: {_known_extensions()}"))
        else:
            found.setdefault(fmt, []).append(name)
    if unknown:
        raise CorpusImportError(unknown[:50])
    if len(found) > 1:
        listing = "; ".join(f"{fmt} ({', '.join(ns[:3])}{', …' if len(ns) > 3 else ''})" for fmt, ns in found.items())
        raise CorpusImportError.one("", f"mixed formats: {listing}; import one format at a time")
    return next(iter(found))
