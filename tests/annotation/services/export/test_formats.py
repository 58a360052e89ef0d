from __future__ import annotations

import zipfile

import pytest

from annotation.services.export.metrics import gleu

from .helpers import jsonl, run

pytestmark = pytest.mark.django_db


def test_the_tsv_has_the_wiki_manual_columns_with_one_row_per_sentence_link(newsela, settings, tmp_path):
    _, root = run(newsela["project"], settings, tmp_path, derived=False, label_policy="majority")
    rows = [line.split("\t") for f in sorted((root / "wiki-manual").glob("*.tsv")) for line in f.read_text().splitlines()]
    assert all(len(r) == 6 for r in rows)
    by_ids = {(r[2], r[1]): r for r in rows}
    label, simple_id, complex_id, simple, complex_, score = by_ids[("Owls-0-0-0", "Owls-1-0-1")]
    assert (label, simple, complex_) == ("aligned", "They hear very well.", "Owls, which hunt at night, have exceptional hearing.")
    assert ("Owls-0-0-0", "Owls-1-0-0") in by_ids  # the 1:2 split is two rows
    assert by_ids[("Bees-0-0-1", "Bees-1-0-1")][0] == "partialAligned"
    assert by_ids[("Bees-0-0-1", "Bees-1-0-0")][0] == "notAligned"
    assert by_ids[("Bees-0-1-2", "Bees-1-0-1")][1:3] == ["Bees-1-0-1", "Bees-0-1-2"]  # article-level-paragraph-index
    assert float(score) == pytest.approx(gleu(complex_, simple), abs=1e-4)


def test_parallel_files_hold_linking_pairs_and_joined_splits(newsela, settings, tmp_path):
    _, root = run(newsela["project"], settings, tmp_path, derived=False, label_policy="stored",
                  split_policy={"mode": "counts", "train": 2, "dev": 0, "test": 0})
    src = (root / "parallel" / "train.src").read_text().splitlines()
    dst = (root / "parallel" / "train.dst").read_text().splitlines()
    assert len(src) == len(dst) == 5  # not-aligned and identical pairs are left out
    assert ("Owls, which hunt at night, have exceptional hearing.", "Owls hunt at night. They hear very well.") in zip(src, dst)
    joined = list(zip((root / "parallel" / "train.joined.src").read_text().splitlines(),
                      (root / "parallel" / "train.joined.dst").read_text().splitlines()))
    assert ("Honey bees communicate the location of flowers by dancing.", "Bees dance to show where flowers are.") in joined
    assert len(joined) == 5


def test_joined_files_join_simple_sentences_aligned_to_the_same_complex_sentence(newsela, settings, tmp_path):
    from .conftest import gold, make_pair

    # C0 of Owls aligned separately to P0 and to P1 (a split annotated as two 1:1 pairs)
    owls = newsela["owls"]
    newsela["pairs"]["o0p01"].delete()
    for s in (1, 0):
        gold(make_pair(owls, "0", "1", [0], [s]), "aligned")
    _, root = run(newsela["project"], settings, tmp_path, derived=False, label_policy="stored",
                  split_policy={"mode": "counts", "train": 2, "dev": 0, "test": 0})
    joined = dict(zip((root / "parallel" / "train.joined.src").read_text().splitlines(),
                      (root / "parallel" / "train.joined.dst").read_text().splitlines()))
    assert joined["Owls, which hunt at night, have exceptional hearing."] == "Owls hunt at night. They hear very well."
    plain = (root / "parallel" / "train.dst").read_text().splitlines()
    assert "Owls hunt at night." in plain and "They hear very well." in plain


def test_jsonl_lines_carry_every_attribute_score_and_vote(newsela, settings, tmp_path):
    _, root = run(newsela["project"], settings, tmp_path, label_policy="majority", derived=False)
    rows = {r["pair"]: r for split in ("train", "test") for r in jsonl(root / "jsonl" / f"{split}.jsonl")}
    row = rows[newsela["pairs"]["c1m1"].pk]
    assert row["attributes"] == {"sum4simp_T": 0.8, "gain_prob": 0.4} and row["score"] == 0.7
    assert len(row["votes"]) == 3 and {"annotator", "value", "seconds"} <= set(row["votes"][0])


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


def test_every_file_is_in_the_zip_with_the_manifest(newsela, settings, tmp_path):
    done, root = run(newsela["project"], settings, tmp_path)
    with zipfile.ZipFile(tmp_path / done.archive) as zf:
        names = set(zf.namelist())
    assert f"export-{done.pk}/manifest.json" in names and f"export-{done.pk}/hf/train/state.json" in names
    assert f"export-{done.pk}/wiki-manual/test.tsv" in names and f"export-{done.pk}/parquet/train.parquet" in names
    assert not any(name.startswith(f"export-{done.pk}/") and "/dev" in name for name in names)  # no empty split


def test_hf_and_parquet_carry_comments_notes_seconds_and_typed_attributes(newsela, settings, tmp_path):
    import pyarrow.parquet as pq

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
