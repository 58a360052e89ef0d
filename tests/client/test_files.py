"""The gold as one table per split (issue 37, item 4): a ``DatasetDict`` whose splits share their features,
``label`` a ``ClassLabel`` of the scheme's values in the scheme's order."""
from __future__ import annotations

import datasets
from alignapp_client.files import gold_tables

SCHEME = ["aligned", "partial", "not-aligned"]


def record(split: str, pair: int, label: str, **more) -> dict:
    return {"pair_id": pair, "complex": "A long sentence.", "simple": "Short.", "label": label, "split": split,
            "votes": more.pop("votes", None), **more}


def test_each_split_is_a_dataset_with_the_same_features_and_a_class_label():
    records = [record("train", 1, "aligned", votes=2), record("train", 2, "not-aligned", votes=1),
               record("test", 3, "undecided")]  # test has no votes at all: still an int column there
    tables = gold_tables(records, ["train", "dev", "test"], SCHEME)
    assert isinstance(tables, datasets.DatasetDict) and list(tables) == ["train", "dev", "test"]
    assert [len(tables[s]) for s in tables] == [2, 0, 1]
    label = tables["train"].features["label"]
    assert isinstance(label, datasets.ClassLabel) and label.names == [*SCHEME, "undecided"]
    assert tables["train"].features == tables["dev"].features == tables["test"].features
    assert tables["train"].features["votes"].dtype == "int64" and tables["test"]["votes"] == [None]
    assert tables["train"]["label"] == [0, 2] and label.int2str(tables["test"]["label"][0]) == "undecided"
    assert "split" not in tables["train"].column_names


def test_the_class_names_do_not_depend_on_which_labels_the_gold_holds():
    one = gold_tables([record("train", 1, "partial")], ["train"], SCHEME)
    other = gold_tables([record("train", 1, "aligned")], ["train"], SCHEME)
    assert one["train"].features["label"] == other["train"].features["label"]
