"""``jsonl`` (``export/formats/jsonl.py``): one pair per line with everything known about it, and how many
complete document pairs its lines carry whole (what the ``jsonl`` import can read back complete)."""
from __future__ import annotations

import json

import pytest

from annotation.services.export.formats.jsonl import JsonlWriter
from tests.annotation.services.export.formats.helpers import batch, record
from tests.annotation.services.export.helpers import jsonl, run

pytestmark = pytest.mark.django_db


def test_jsonl_lines_carry_every_attribute_score_and_vote(newsela, settings, tmp_path):
    _, root = run(newsela["project"], settings, tmp_path, label_policy="majority", derived=False)
    rows = {r["pair"]: r for split in ("train", "test") for r in jsonl(root / "jsonl" / f"{split}.jsonl")}
    row = rows[newsela["pairs"]["c1m1"].pk]
    assert row["attributes"] == {"sum4simp_T": 0.8, "gain_prob": 0.4} and row["score"] == 0.7
    assert len(row["votes"]) == 3 and {"annotator", "value", "seconds"} <= set(row["votes"][0])


def test_a_line_names_its_sentences_and_a_complete_pair_comes_back_complete_only_when_every_sentence_is_named(tmp_path):
    writer = JsonlWriter(tmp_path, ["train"], complete={(1, 2)})
    records = [record([0], [0, 1], "aligned")]
    writer.write(batch(records), records)
    assert writer.complete_back() == (1, 0)  # complex sentence 1 and simple sentence 2 are on no line
    records = [record([0], [0, 1], "aligned"), record([1], [2], "aligned")]
    writer.write(batch(records), records)
    writer.close()
    assert writer.complete_back() == (2, 1)
    lines = [json.loads(line) for line in (tmp_path / "jsonl" / "train.jsonl").read_text().splitlines()]
    assert len(lines) == 3 and lines[0]["id"] == "p100" and lines[0]["complete"] is True
    assert lines[0]["simple_sentences"] == ["Owls hunt at night.", "They hear very well."]


def test_a_complete_pair_without_any_line_is_counted_written_and_not_whole(tmp_path):
    writer = JsonlWriter(tmp_path, ["train"], complete={(1, 2)})
    writer.write(batch([]), [])
    assert writer.close() == [] and writer.complete_back() == (1, 0)
