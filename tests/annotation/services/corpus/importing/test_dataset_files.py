"""Reading a dataset's parquet and Arrow files (``corpus/importing/dataset_files.py``), bounded by what they
decode to: the metadata's rows, values and uncompressed bytes checked before a row is read, each batch's
decoded size, longest text and longest list before its rows are built, and an unreadable file named."""
from __future__ import annotations

from dataclasses import replace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from annotation.services.corpus.importing import dataset_files as df
from annotation.services.corpus.importing.base import InputFile, ParseContext
from annotation.services.corpus.importing.limits import Limits
from annotation.services.corpus.importing.problems import Problems

pytestmark = pytest.mark.django_db  # the limits come from the settings

TABLE = pa.table({"complex": ["A long sentence here.", "Another long one.", "A third."],
                  "simple": ["Short.", "Brief.", "Third."],
                  "sentences": [["a", "b"], ["c"], ["d", "e", "f"]]})


def parquet(table: pa.Table = TABLE, name: str = "train.parquet", **options) -> InputFile:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **options)
    data = sink.getvalue().to_pybytes()
    return InputFile(name, len(data), data=data)


def arrow(table: pa.Table = TABLE, *, stream: bool = True) -> InputFile:
    sink = pa.BufferOutputStream()
    with (pa.ipc.new_stream if stream else pa.ipc.new_file)(sink, table.schema) as writer:
        writer.write_table(table)
    data = sink.getvalue().to_pybytes()
    return InputFile("data-00000-of-00001.arrow", len(data), data=data)


def context(**limits) -> ParseContext:
    return ParseContext(language="en", problems=Problems(), limits=replace(Limits.from_settings(), **limits))


@pytest.mark.parametrize("f", [parquet(), arrow(), arrow(stream=False)], ids=["parquet", "stream", "file"])
def test_every_kind_of_file_gives_its_schema_and_rows(f):
    ctx = context()
    assert df.schema(f, ctx).names == ["complex", "simple", "sentences"]
    assert list(df.rows(f, ctx))[2] == {"complex": "A third.", "simple": "Third.", "sentences": ["d", "e", "f"]}
    assert df.has_rows(f, ctx) and not ctx.problems


def test_an_unreadable_file_is_named_and_gives_nothing():
    ctx = context()
    broken = InputFile("bad.parquet", 4, data=b"nope")
    assert df.schema(broken, ctx) is None and list(df.rows(broken, ctx)) == []
    assert [p.message.startswith("not a readable parquet file") for p in ctx.problems.items] == [True, True]
    assert df.check_sizes([broken], context()) is False


def test_the_metadata_counts_rows_values_and_bytes_without_decoding():
    f = parquet()
    rows, size = df.uncompressed_size(f)
    assert rows == 3 and size > 0
    assert df.column_values(f) == {"complex": 3, "simple": 3, "sentences.list.element": 6}
    assert not df.has_rows(parquet(TABLE.slice(0, 0)), context())


@pytest.mark.parametrize("limits,limit,message", [
    ({"lines": 2}, "IMPORT_MAX_LINES", "file train.parquet has 3 rows (by its metadata)"),
    ({"sentences": 5}, "IMPORT_MAX_SENTENCES", "column sentences.list.element holds 6 values in the import"),
    ({"total_bytes": 10}, "IMPORT_MAX_BYTES", "the dataset holds"),
])
def test_a_file_past_a_limit_by_its_metadata_is_refused_before_a_row_is_read(limits, limit, message):
    ctx = context(**limits)
    assert df.check_sizes([parquet(), InputFile("notes.txt", 1, data=b"x")], ctx) is False
    (problem,) = ctx.problems.items
    assert problem.limit == limit and message in problem.message and problem.file == "train.parquet"


def test_values_add_up_over_the_files_of_an_import():
    assert df.check_sizes([parquet()], context(sentences=10))
    ctx = context(sentences=10)
    assert not df.check_sizes([parquet(), parquet(name="dev.parquet")], ctx)
    (problem,) = ctx.problems.items
    assert problem.file == "dev.parquet" and "holds 12 values in the import (6 in this" in problem.message


def test_a_dictionary_column_counts_each_rows_value_as_decoded():
    repeated = pa.table({"text": pa.array(["x" * 1000] * 50).dictionary_encode()})
    batch = repeated.to_batches()[0]
    size, longest = df.decoded_size(batch)
    assert size >= 50 * 1000 and longest == ("text", 1000)
    assert df.decoded_size(pa.table({"n": [1, 2]}).to_batches()[0])[1] is None  # no text column


@pytest.mark.parametrize("limits,field,limit", [
    ({"document_chars": 20}, "complex", "IMPORT_MAX_DOCUMENT_CHARS"),
    ({"sentences_per_document": 2}, "sentences", "IMPORT_MAX_SENTENCES_PER_DOCUMENT"),
    ({"total_bytes": 50}, None, "IMPORT_MAX_BYTES"),
])
def test_a_batch_past_a_limit_is_refused_at_its_row_before_its_rows_are_built(limits, field, limit):
    ctx = context(**limits)
    assert list(df.rows(parquet(), ctx)) == []
    (problem,) = ctx.problems.items
    assert (problem.field, problem.limit) == (field, limit)
    assert problem.line == (3 if limit == "IMPORT_MAX_SENTENCES_PER_DOCUMENT" else 1)  # the row of the long list


def test_decoded_values_add_up_against_the_imports_sentences():
    ctx = context(sentences=8)
    assert len(list(df.rows(arrow(), ctx))) == 3  # 6 list items and 3 values a column so far
    assert list(df.rows(arrow(), ctx)) == []
    assert ctx.problems.items[0].limit == "IMPORT_MAX_SENTENCES"
