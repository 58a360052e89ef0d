"""Issue 35 §5: every folder an export writes loads with the real ``datasets`` library —
``load_from_disk`` for ``hf/`` and ``hf/articles/``, ``load_dataset(<builder>, data_dir=…)`` for the
others — and no format writes an empty split file (``datasets`` refuses a split without data: the
project's ``dev`` split has no pair here)."""
from __future__ import annotations

import pytest

from .helpers import run

datasets = pytest.importorskip("datasets")
pytestmark = pytest.mark.django_db
WIKI_COLUMNS = ["label", "simple_id", "complex_id", "simple", "complex", "gleu"]


def test_every_exported_folder_loads_with_datasets_and_no_split_file_is_empty(newsela, settings, tmp_path):
    done, root = run(newsela["project"], settings, tmp_path, label_policy="majority")
    assert done.pair_count
    for path in root.rglob("*"):
        if path.is_file() and path.suffix in (".jsonl", ".tsv", ".src", ".dst", ".parquet", ".arrow"):
            assert path.stat().st_size, f"{path.relative_to(root)} is empty"
            assert not path.name.startswith("dev"), f"{path.relative_to(root)}: dev has no pair"
    cache = str(tmp_path / "cache")
    pairs = datasets.load_from_disk(str(root / "hf"))
    assert set(pairs) == {"train", "test"} and sum(map(len, pairs.values())) == done.pair_count
    assert set(datasets.load_from_disk(str(root / "hf" / "articles"))) == {"train", "test"}
    parquet = datasets.load_dataset("parquet", data_dir=str(root / "parquet"), cache_dir=cache)
    assert sum(map(len, parquet.values())) == done.pair_count
    jsonl = datasets.load_dataset("json", data_dir=str(root / "jsonl"), cache_dir=cache)
    assert sum(map(len, jsonl.values())) == done.pair_count
    assert set(datasets.load_dataset("json", data_dir=str(root / "articles"), cache_dir=cache)) == {"train", "test"}
    tsv = datasets.load_dataset("csv", data_dir=str(root / "wiki-manual"), delimiter="\t", column_names=WIKI_COLUMNS,
                                cache_dir=cache)
    assert set(tsv) == {"train", "test"} and set(tsv["train"]["label"]) <= {"aligned", "partialAligned", "notAligned"}
    text = datasets.load_dataset("text", data_files={"train": str(root / "parallel" / "train.src")}, cache_dir=cache)
    assert len(text["train"])
