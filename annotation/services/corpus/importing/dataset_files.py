"""Reading a Hugging Face dataset's files (parquet, Arrow) for the ``hf`` import, bounded by what they decode to.

A parquet or Arrow file compresses well: a 949-byte zstd parquet can hold 200 rows of a 2.5 MB string.
Its size says nothing of its data, so the import counts the data itself against ``IMPORT_MAX_BYTES``
(the whole import, uncompressed):

* **before a row is read** — a parquet file's metadata gives each row group's uncompressed size
  (:func:`check_sizes`): the import's files together may hold at most the limit;
* **as the rows are read** — a parquet file is read a row group at a time in batches of about
  ``BATCH_BYTES`` (from the metadata's sizes), its text columns kept dictionary-encoded as stored (a
  value repeated in a dictionary is decoded once); an Arrow file is memory-mapped and read a record
  batch at a time. Each batch's decoded size (a dictionary column: its values' lengths at its
  indices) is added up before the batch becomes Python rows (:func:`batches`), and the file is
  refused at the batch that passes the limit, naming its first row — or at the first batch holding a
  text longer than any document may be (``IMPORT_MAX_DOCUMENT_CHARS``), before its rows are built.

Their counts are bounded the same way (issue 36 item 8: a 5.6 KB parquet holding one row of 5.5 M short
sentences a side grew a web worker to 2.3 GB while its rows were built):

* **before a row is read** — a parquet file's rows against ``IMPORT_MAX_LINES`` (a row is a line), and
  each column's values (a list column: every item of every row's list, by the column chunks'
  ``num_values``) against ``IMPORT_MAX_SENTENCES`` over the import (:func:`check_sizes`);
* **as the rows are read** — each batch's lists, before its rows are built: a list longer than a
  document may be (``IMPORT_MAX_SENTENCES_PER_DOCUMENT``) refuses the file at its row, and the values
  of each column are added up against ``IMPORT_MAX_SENTENCES`` (an Arrow file has no such metadata).

Used as ``for batch in batches(f, ctx): rows = batch.to_pylist()``.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from annotation.services.corpus.importing.base import InputFile, ParseContext
from annotation.services.corpus.importing.limits import over

BATCH_BYTES = 16 * 1024 * 1024  # decoded bytes a parquet batch aims at (from the metadata's sizes)
BATCH_ROWS = 5000  # rows of a batch at most


def _unreadable(f: InputFile, ctx: ParseContext, exc: Exception) -> None:
    ctx.problems.add(f.name, f"not a readable {'parquet' if f.extension == 'parquet' else 'Arrow'} file: {exc}")


def _source(f: InputFile):
    """A file to read Arrow data from: memory-mapped when it is on disk (batches are not copied)."""
    import pyarrow as pa

    return pa.memory_map(str(f.path)) if f.path is not None else pa.BufferReader(f.data or b"")


def schema(f: InputFile, ctx: ParseContext) -> Any:
    """The Arrow schema of a file (an empty split has one too); None after reporting it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        with _source(f) as source:
            if f.extension == "parquet":
                return pq.ParquetFile(source).schema_arrow
            try:
                return pa.ipc.open_stream(source).schema  # reads the schema only
            except pa.ArrowInvalid:
                source.seek(0)
                return pa.ipc.open_file(source).schema
    except (pa.ArrowException, OSError) as exc:
        _unreadable(f, ctx, exc)
        return None


def uncompressed_size(f: InputFile) -> tuple[int, int]:
    """``(rows, uncompressed bytes)`` of a parquet file, from its metadata (nothing decoded)."""
    import pyarrow.parquet as pq

    with _source(f) as source:
        meta = pq.ParquetFile(source).metadata
        return meta.num_rows, sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))


def column_values(f: InputFile) -> dict[str, int]:
    """Each leaf column's values in a parquet file (a list column's items counted one by one), from its
    metadata: nothing decoded."""
    import pyarrow.parquet as pq

    with _source(f) as source:
        meta = pq.ParquetFile(source).metadata
        out: dict[str, int] = {}
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            for c in range(group.num_columns):
                column = group.column(c)
                out[column.path_in_schema] = out.get(column.path_in_schema, 0) + column.num_values
        return out


def _too_many(f: InputFile, ctx: ParseContext, rows: int, values: dict[str, int], seen: dict[str, int]) -> bool:
    """A parquet file's rows (``IMPORT_MAX_LINES``) and its columns' values added to the import's
    (``IMPORT_MAX_SENTENCES``), by its metadata; True after reporting the first one past its limit."""
    limits = ctx.limits
    if rows > limits.lines:
        ctx.problems.add(f.name, over(f"file {f.name} has {rows:,} rows (by its metadata)", "IMPORT_MAX_LINES",
                                      limits.lines), limit="IMPORT_MAX_LINES")
        return True
    for column, count in values.items():
        seen[column] = seen.get(column, 0) + count
        if seen[column] > limits.sentences:
            ctx.problems.add(f.name, over(f"column {column} holds {seen[column]:,} values in the import ({count:,} "
                                          f"in this {f.size:,}-byte file, by its metadata)", "IMPORT_MAX_SENTENCES",
                                          limits.sentences), field=column.split(".")[0], limit="IMPORT_MAX_SENTENCES")
            return True
    return False


def check_sizes(files: list[InputFile], ctx: ParseContext) -> bool:
    """Whether the parquet files' data, uncompressed (their metadata's sizes), fits ``IMPORT_MAX_BYTES``,
    their rows ``IMPORT_MAX_LINES`` and their columns' values ``IMPORT_MAX_SENTENCES``; refused at the
    file that passes one, before any row is read."""
    import pyarrow as pa

    limit, total, seen = ctx.limits.total_bytes, 0, {}
    for f in files:
        if f.extension != "parquet":
            continue
        try:
            rows, size = uncompressed_size(f)
            values = column_values(f)
        except (pa.ArrowException, OSError) as exc:
            _unreadable(f, ctx, exc)
            return False
        if _too_many(f, ctx, rows, values, seen):
            return False
        total += size
        if total > limit:
            ctx.problems.add(f.name, over(f"the dataset holds {total:,} bytes uncompressed ({size:,} in this "
                                          f"{f.size:,}-byte file, by its metadata)", "IMPORT_MAX_BYTES", limit),
                             limit="IMPORT_MAX_BYTES")
            return False
    return True


def _texts(batch: Any) -> Iterator[tuple[str, Any, Any]]:
    """``(column, values, indices)`` of each text column of a batch (a dictionary column: its dictionary
    and indices; a plain one: itself and None)."""
    import pyarrow as pa

    def text(kind: Any) -> bool:
        return pa.types.is_string(kind) or pa.types.is_large_string(kind)

    for name, column in zip(batch.schema.names, batch.columns):
        if pa.types.is_dictionary(column.type) and text(column.type.value_type):
            yield name, column.dictionary, column.indices
        elif text(column.type):
            yield name, column, None


def decoded_size(batch: Any) -> tuple[int, tuple[str, int] | None]:
    """Bytes a record batch decodes to (a dictionary-encoded text column counts each row's value), and
    its longest text value: ``(column, characters)``."""
    import pyarrow.compute as pc

    total, longest = sum(c.nbytes for c in batch.columns), None
    for name, values, indices in _texts(batch):
        if indices is not None:
            total += int(pc.sum(pc.binary_length(values).take(indices)).as_py() or 0) - values.nbytes
        chars = pc.utf8_length(values) if indices is None else pc.utf8_length(values).take(indices)
        most = int(pc.max(chars).as_py() or 0)
        if longest is None or most > longest[1]:
            longest = (name, most)
    return total, longest


def _lists(name: str, array: Any) -> Iterator[tuple[str, Any, Any]]:
    """``(column path, values, per-row lengths or None)`` of every column nested in ``array``: a struct's
    fields, a list's items (its lengths: one per row of the array holding it)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    if pa.types.is_struct(kind):
        for field, child in zip(kind, array.flatten()):
            yield from _lists(f"{name}.{field.name}", child)
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        items = array.flatten()
        yield name, items, pc.list_value_length(array)
        yield from _lists(name, items)
    else:
        yield name, array, None


def _too_long(f: InputFile, ctx: ParseContext, batch: Any, row: int) -> bool:
    """A batch's lists, before its rows are built: True (reported at the row) when one is longer than a
    document may be (``IMPORT_MAX_SENTENCES_PER_DOCUMENT``), or a column's values in the import pass
    ``IMPORT_MAX_SENTENCES``."""
    import pyarrow.compute as pc

    limits, counted = ctx.limits, {}
    for name, column in zip(batch.schema.names, batch.columns):
        for path, values, lengths in _lists(name, column):
            if lengths is not None and len(lengths):
                most = pc.max(lengths).as_py() or 0
                if most > limits.sentences_per_document:
                    at = row + 1 + (pc.index(lengths, most).as_py() if len(lengths) == batch.num_rows else 0)
                    ctx.problems.add(f.name, over(f"a list of {most:,} items", "IMPORT_MAX_SENTENCES_PER_DOCUMENT",
                                                  limits.sentences_per_document), line=at, field=path,
                                     limit="IMPORT_MAX_SENTENCES_PER_DOCUMENT")
                    return True
            if lengths is None:
                counted[path] = counted.get(path, 0) + len(values)
    for path, count in counted.items():
        total = ctx.decoded_values.get(path, 0) + count
        ctx.decoded_values[path] = total
        if total > limits.sentences:
            ctx.problems.add(f.name, over(f"column {path} holds more than {limits.sentences:,} values by rows "
                                          f"{row + 1:,}-{row + batch.num_rows:,} of this file", "IMPORT_MAX_SENTENCES",
                                          limits.sentences), line=row + 1, field=path, limit="IMPORT_MAX_SENTENCES")
            return True
    return False


def _too_large(f: InputFile, ctx: ParseContext, batch: Any, row: int) -> bool:
    """Count a batch into the import's decoded bytes; True (reported at its first row) when it passes
    ``IMPORT_MAX_BYTES`` or holds a text longer than any document may be (``IMPORT_MAX_DOCUMENT_CHARS``),
    or its lists are too long (:func:`_too_long`)."""
    if _too_long(f, ctx, batch, row):
        return True
    size, longest = decoded_size(batch)
    ctx.decoded_bytes += size
    rows = f"rows {row + 1:,}-{row + batch.num_rows:,} of this file"
    if longest is not None and longest[1] > ctx.limits.document_chars:
        limit = ctx.limits.document_chars
        ctx.problems.add(f.name, over(f"a text of {longest[1]:,} characters in {rows}", "IMPORT_MAX_DOCUMENT_CHARS", limit),
                         line=row + 1, field=longest[0], limit="IMPORT_MAX_DOCUMENT_CHARS")
        return True
    if ctx.decoded_bytes > ctx.limits.total_bytes:
        limit = ctx.limits.total_bytes
        ctx.problems.add(f.name, over(f"the dataset decodes to more than {limit:,} bytes by {rows}", "IMPORT_MAX_BYTES",
                                      limit), line=row + 1, limit="IMPORT_MAX_BYTES")
        return True
    return False


def _parquet_batches(f: InputFile) -> Iterator[Any]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    with _source(f) as source:
        file = pq.ParquetFile(source)
        texts = [field.name for field in file.schema_arrow
                 if pa.types.is_string(field.type) or pa.types.is_large_string(field.type) or pa.types.is_binary(field.type)]
        if texts:  # read the text columns as stored: a dictionary page's values decoded once, not once a row
            file = pq.ParquetFile(source, read_dictionary=texts)
        rows, size = file.metadata.num_rows, sum(file.metadata.row_group(i).total_byte_size
                                                 for i in range(file.metadata.num_row_groups))
        batch_rows = max(1, min(BATCH_ROWS, BATCH_BYTES * rows // max(size, 1)))
        for group in range(file.metadata.num_row_groups):
            yield from file.iter_batches(batch_size=batch_rows, row_groups=[group])


def _arrow_batches(f: InputFile) -> Iterator[Any]:
    import pyarrow as pa

    with _source(f) as source:
        try:
            yield from pa.ipc.open_stream(source)
        except pa.ArrowInvalid:
            source.seek(0)
            reader = pa.ipc.open_file(source)
            for i in range(reader.num_record_batches):
                yield reader.get_batch(i)


def batches(f: InputFile, ctx: ParseContext, *, count: bool = True) -> Iterator[Any]:
    """The record batches of a file, one at a time; with ``count``, each one's decoded size is added to
    the import's (``ctx.decoded_bytes``) first, and the file is refused at the batch that passes
    ``IMPORT_MAX_BYTES`` or holds a text over ``IMPORT_MAX_DOCUMENT_CHARS`` (at its first row), before
    that batch is read into Python rows."""
    import pyarrow as pa

    row = 0
    try:
        for batch in _parquet_batches(f) if f.extension == "parquet" else _arrow_batches(f):
            if count and _too_large(f, ctx, batch, row):
                return
            row += batch.num_rows
            yield batch
    except (pa.ArrowException, OSError) as exc:
        _unreadable(f, ctx, exc)


def has_rows(f: InputFile, ctx: ParseContext) -> bool:
    """Whether a file holds a row (a parquet file's footer says; an Arrow file is read to its first row)."""
    if f.extension == "parquet":
        return uncompressed_size(f)[0] > 0
    return any(batch.num_rows for batch in batches(f, ctx, count=False))


def rows(f: InputFile, ctx: ParseContext) -> Iterator[dict]:
    """The rows of a file as dicts, a batch at a time."""
    for batch in batches(f, ctx):
        yield from batch.to_pylist()
