"""Files to and from the server: an upload's multipart files, records as a table."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def form_value(value: Any) -> str:
    """A form field's text (``true``/``false`` for booleans)."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


@contextlib.contextmanager
def upload(path: Path) -> Iterator[list[tuple[str, tuple[str | None, Any, str] | tuple[None, str]]]]:
    """The multipart ``files`` of a file, or of every (not hidden) file under a folder, named by
    their path relative to it; for a folder also a ``paths`` field per file (that relative path, in
    the order of the files: the server keeps the folder's layout, e.g. ``train/state.json`` beside
    ``dev/state.json`` of a ``save_to_disk`` folder, which file names alone cannot tell apart)."""
    if not path.exists():
        raise FileNotFoundError(path)
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.is_file()
                       and not any(part.startswith(".") for part in p.relative_to(path).parts))
        named = [(p, p.relative_to(path).as_posix()) for p in found]
    else:
        named = [(path, path.name)]
    with contextlib.ExitStack() as stack:
        files: list = [("files", (name, stack.enter_context(p.open("rb")), "application/octet-stream"))
                       for p, name in named]
        yield files + ([("paths", (None, name)) for _, name in named] if path.is_dir() else [])


def table(records: list[dict[str, Any]]) -> Any:
    """``records`` as a ``datasets.Dataset`` when ``datasets`` is installed, else a pandas
    ``DataFrame``, else the list itself."""
    try:
        import datasets
    except ImportError:
        pass
    else:
        return datasets.Dataset.from_list(records)
    try:
        import pandas
    except ImportError:
        return records
    return pandas.DataFrame.from_records(records)
