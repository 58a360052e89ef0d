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


def _rows_write(self, batch, records):
    """The writer before issue 37's columns: a row dict per pair (:func:`hf.row`), appended column by column."""
    from annotation.services.export.formats.hf import row

    self.articles.write(batch, records)
    if not records:
        return
    self._writers(batch.split)
    buf = self.buffers[batch.split]
    for r in records:
        values = row(batch, r, self.complete, self.attributes)
        for name, column in buf.items():
            column.append(values[name])
    if len(buf["id"]) >= self.BATCH_ROWS:
        self._flush(batch.split)


@pytest.mark.parametrize("batch_rows", [3, HfWriter.BATCH_ROWS])
def test_the_columnar_writer_writes_the_bytes_and_rows_the_row_by_row_one_wrote(newsela, settings, tmp_path,
                                                                               monkeypatch, batch_rows):
    """Issue 37: the hf writer builds an article's columns at once (``hf.columns``) instead of a dict per pair;
    every Arrow and parquet file is byte for byte the row-by-row writer's, and the datasets load with the same
    features and rows — votes with comments, an adjudication's note, typed attributes, derived pairs and
    groups, complete document pairs — also when record batches are flushed every 3 rows (a batch boundary
    inside an article's rows)."""
    from datasets import load_from_disk

    from annotation.models import Adjudication, ArticleCompletion, Label

    pair = newsela["pairs"]["c1m1"]
    Label.objects.filter(pair=pair).update(comment="the second clause is dropped", seconds=12.25)
    pair.features = {**pair.features, "is_split": True, "note_kind": "lexical"}
    pair.save(update_fields=["features"])
    Adjudication.objects.update_or_create(pair=pair, defaults={"value": "aligned", "provenance": "adjudicated",
                                                               "note": "majority was right"})
    label = Label.objects.filter(pair__article=pair.article).first()
    ArticleCompletion.objects.create(article=pair.article, complex_document=pair.complex_document,
                                     simple_document=pair.simple_document, annotator=label.annotator)
    monkeypatch.setattr(HfWriter, "BATCH_ROWS", batch_rows)
    options = {"formats": ["hf"], "label_policy": "majority-or-single", "derived": True}
    done, columnar = run(newsela["project"], settings, tmp_path / "columns", **options)
    monkeypatch.setattr(HfWriter, "write", _rows_write)
    _, rows = run(newsela["project"], settings, tmp_path / "rows", **options)
    files = sorted(p.relative_to(columnar) for p in columnar.rglob("*") if p.suffix in (".arrow", ".parquet"))
    assert len(files) >= 4 and files == sorted(p.relative_to(rows) for p in rows.rglob("*")
                                               if p.suffix in (".arrow", ".parquet"))
    for name in files:
        assert (columnar / name).read_bytes() == (rows / name).read_bytes(), name
    new, old = load_from_disk(str(columnar / "hf")), load_from_disk(str(rows / "hf"))
    assert set(new) == set(old)
    assert sum(len(new[s]) for s in new) == done.pair_count > 3
    for split in new:
        assert new[split].features == old[split].features and new[split].to_list() == old[split].to_list()
    written = [r for s in new for r in new[s].to_list()]
    assert any(r["derived"] for r in written) and any(r["group_id"] for r in written) and any(r["complete"] for r in written)
    assert any(v["comment"] for r in written for v in r["votes"]) and any(r["note"] for r in written)


def test_the_columns_are_the_rows_of_each_pair_of_the_schema(tmp_path):
    """``hf.columns`` gives every column of the schema, each the list of ``hf.row``'s values — a pair naming a
    sentence its document lacks and a document the batch does not hold included."""
    from annotation.services.export.formats.hf import columns, row

    records = [record([0], [0], features={"x": 1.5}), record([1], [1, 2], counts_as="partial", votes=[
        {"annotator": "a1", "value": "partial", "seconds": 2.0, "comment": "c"}, {"annotator": "a2", "value": "aligned"}]),
        record([0], [0], counts_as="not", group={"id": "g1-2-1", "kind": "1:1"}), record([0], [0], pair_id=7)]
    records[2].complex_ids, records[2].simple_ids = (0, 5), (9,)  # sentences the documents do not have
    records[3].simple_document = 7  # a document the batch does not hold
    the_batch = batch(records)
    attributes = {"x": "float64", "kind": "string"}
    built = columns(the_batch, records, {(1, 2)}, attributes)
    assert list(built) == hf_schema(attributes).names
    assert built == {name: [row(the_batch, r, {(1, 2)}, attributes)[name] for r in records] for name in built}
    assert built["complex_paragraphs"][2] == [0, 0] and built["simple_sentence_count"][3] is None
