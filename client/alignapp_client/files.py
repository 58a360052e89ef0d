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


def gold_tables(records: list[dict[str, Any]], splits: list[str], label_names: list[str]) -> Any:
    """``records`` (each with its ``split``) as one table per split, in ``splits`` order: a
    ``datasets.DatasetDict`` whose splits share one set of features (inferred over all the records,
    so a column that is empty in one split has the type it has in the others; ``label`` a
    ``ClassLabel`` of ``label_names`` then any other value found, sorted); without ``datasets`` a dict of
    DataFrames (or of lists of dicts)."""
    by_split: dict[str, list[dict[str, Any]]] = {name: [] for name in splits}
    for record in records:
        by_split.setdefault(record["split"], []).append({k: v for k, v in record.items() if k != "split"})
    try:
        import datasets
    except ImportError:
        return {name: table(rows) for name, rows in by_split.items()}
    rows = [row for name in splits for row in by_split[name]]
    seen = {str(row["label"]) for row in rows if row.get("label") is not None}
    names = list(dict.fromkeys(label_names)) + sorted(seen - set(label_names))
    everything = datasets.Dataset.from_list(rows) if rows else None
    features = datasets.Features(dict(everything.features)) if everything is not None else datasets.Features()
    if "label" in features or not rows:
        features["label"] = datasets.ClassLabel(names=names or ["aligned"])
    out = {}
    for name in splits:
        part = by_split[name]
        columns = {key: [row.get(key) for row in part] for key in features}
        out[name] = datasets.Dataset.from_dict(columns, features=features)
    return datasets.DatasetDict(out)
