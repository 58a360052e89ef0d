"""``hf`` (``export/formats/hf.py``): a ``datasets`` directory and parquet files with typed ``attr_<key>``
columns (a value of another type is null, never coerced), written in record batches."""
from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from annotation.services.export.formats.hf import HfWriter, hf_schema
from tests.annotation.services.export.formats.helpers import batch, record
from tests.annotation.services.export.helpers import jsonl, run

pytestmark = pytest.mark.django_db


def test_the_hf_directory_loads_with_datasets(newsela, settings, tmp_path):
    from datasets import load_dataset, load_from_disk

    done, root = run(newsela["project"], settings, tmp_path, label_policy="majority")
    data = load_from_disk(str(root / "hf"))
    assert set(data) == {"train", "test"} and all(len(data[s]) for s in data)  # dev has no pair: no empty split
    total = sum(len(data[s]) for s in data)
    assert total == done.pair_count
    train = data["train"] if len(data["train"]) else data["test"]
    assert {"complex", "simple", "label", "provenance", "votes", "note", "attr_gain_prob", "derived"} <= set(train.column_names)
    assert train.features["attr_gain_prob"].dtype == "float64"
    # datasets refuses a split whose parquet file has no rows: name the non-empty ones
    files = {s: str(root / "parquet" / f"{s}.parquet") for s in data}
    parquet = load_dataset("parquet", data_files=files, cache_dir=str(tmp_path / "cache"))
    assert sum(len(parquet[s]) for s in parquet) == done.pair_count


def test_hf_and_parquet_carry_comments_notes_seconds_and_typed_attributes(newsela, settings, tmp_path):
    from annotation.models import Adjudication, Label

    pair = newsela["pairs"]["c1m1"]
    Label.objects.filter(pair=pair).update(comment="the second clause is dropped", seconds=12.25)
    pair.features = {**pair.features, "is_split": True, "note_kind": "lexical"}
    pair.save(update_fields=["features"])
    Adjudication.objects.update_or_create(pair=pair, defaults={"value": "aligned", "provenance": "adjudicated",
                                                               "note": "majority was right"})
    _, root = run(newsela["project"], settings, tmp_path, label_policy="majority", derived=False)
    rows = [r for f in sorted((root / "parquet").glob("*.parquet")) for r in pq.read_table(f).to_pylist()]
    schema = pq.read_schema(next((root / "parquet").glob("*.parquet")))
    assert str(schema.field("attr_gain_prob").type) == "double"
    assert str(schema.field("attr_is_split").type) == "bool"
    assert str(schema.field("attr_note_kind").type) == "string"
    assert "attributes" not in schema.names
    row = next(r for r in rows if r["pair"] == pair.pk)
    assert row["attr_gain_prob"] == 0.4 and row["attr_is_split"] is True and row["attr_note_kind"] == "lexical"
    assert row["note"] == "majority was right"
    assert {v["comment"] for v in row["votes"]} == {"the second clause is dropped"}
    assert {v["seconds"] for v in row["votes"]} == {12.2}
    assert all(v["annotator"].startswith("a") and v["annotator"][1:].isdigit() for v in row["votes"])  # pseudonymous
    other = next(r for r in rows if r["pair"] != pair.pk)
    assert other["attr_is_split"] is None
    lines = {r["pair"]: r for split in ("train", "dev", "test") if (root / "jsonl" / f"{split}.jsonl").exists()
             for r in jsonl(root / "jsonl" / f"{split}.jsonl")}
    assert lines[pair.pk]["note"] == "majority was right"
    assert lines[pair.pk]["votes"][0]["comment"] == "the second clause is dropped"


def test_an_attribute_of_another_type_is_null_and_a_structured_one_is_json(tmp_path):
    writer = HfWriter(tmp_path, ["train"], attributes={"x": "float64", "flag": "bool", "kind": "string"})
    records = [record([0], [0], features={"x": True, "flag": 1, "kind": {"b": 1, "a": 2}}),
               record([1], [2], features={"x": 2, "flag": False, "kind": "lexical"})]
    writer.write(batch(records), records)
    writer.close()
    rows = pq.read_table(tmp_path / "parquet" / "train.parquet").to_pylist()
    assert [(r["attr_x"], r["attr_flag"], r["attr_kind"]) for r in rows] == [
        (None, None, '{"a": 2, "b": 1}'), (2.0, False, "lexical")]


def test_rows_are_flushed_in_batches_and_every_row_is_written_once(tmp_path, monkeypatch):
    monkeypatch.setattr(HfWriter, "BATCH_ROWS", 2)
    writer = HfWriter(tmp_path, ["train"])
    for ids in ([0], [1]):
        records = [record(ids, [0]), record(ids, [1], pair_id=900 + ids[0]), record(ids, [2], pair_id=950 + ids[0])]
        writer.write(batch(records), records)
    writer.close()
    table = pq.read_table(tmp_path / "parquet" / "train.parquet")
    assert table.num_rows == 6 and writer.rows == {"train": 6}
    assert table.schema.names == hf_schema().names


def test_nothing_written_leaves_no_split_and_no_dataset_dict(tmp_path):
    writer = HfWriter(tmp_path, ["train", "test"])
    writer.write(batch([]), [])
    writer.close()
    assert not (tmp_path / "hf" / "dataset_dict.json").exists() and not (tmp_path / "parquet").exists()
