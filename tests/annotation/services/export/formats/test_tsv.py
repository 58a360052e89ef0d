"""``tsv`` (``export/formats/tsv.py``): the Wiki-Manual layout, one row per sentence link, labels as the released
files name them, and the pairs the six columns cannot carry left out and counted (never written as a label)."""
from __future__ import annotations

import pytest

from annotation.label_schemes import UNKNOWN_KIND
from annotation.services.export.formats.tsv import TsvWriter
from annotation.services.export.metrics import gleu
from annotation.services.review.gold_rule import UNDECIDED
from tests.annotation.services.export.formats.helpers import batch, record
from tests.annotation.services.export.helpers import run

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


def rows(path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text().splitlines()]


def test_an_n_to_m_pair_is_one_row_per_sentence_link_with_the_pairs_label(tmp_path):
    writer = TsvWriter(tmp_path, ["train"])
    records = [record([0], [0, 1], "partial"), record([1], [2], "not")]
    writer.write(batch(records), records)
    assert writer.close() == [tmp_path / "wiki-manual" / "train.tsv"]
    got = rows(tmp_path / "wiki-manual" / "train.tsv")
    assert [(r[0], r[1], r[2]) for r in got] == [("partialAligned", "Owls-1-0-0", "Owls-0-0-0"),
                                                 ("partialAligned", "Owls-1-0-1", "Owls-0-0-0"),
                                                 ("notAligned", "Owls-1-1-2", "Owls-0-0-1")]
    assert got[0][3:5] == ["Owls hunt at night.", "Owls, which hunt at night, have exceptional hearing."]


def test_a_link_of_unknown_kind_and_a_tie_have_no_row_and_are_counted_by_reason(tmp_path):
    writer = TsvWriter(tmp_path, ["train"])
    records = [record([0], [0], UNKNOWN_KIND), record([0], [1], UNDECIDED), record([1], [2], "aligned")]
    writer.write(batch(records), records)
    writer.close()
    assert [r[0] for r in rows(tmp_path / "wiki-manual" / "train.tsv")] == ["aligned"]
    assert writer.left_out() == {UNKNOWN_KIND: 1, UNDECIDED: 1}
    assert not (tmp_path / "wiki-manual" / "gold_sidecar.json").exists()  # no gold policy: no sidecar


def test_a_split_without_rows_gets_no_file_and_tabs_in_a_text_do_not_make_columns(tmp_path):
    writer = TsvWriter(tmp_path, ["train", "test"])
    tabbed = record([0], [0], "aligned")
    tabbed.simple_sentences = ["Owls hunt\tat night."]
    writer.write(batch([tabbed]), [tabbed])
    writer.write(batch([], split="test"), [])
    writer.close()
    assert sorted(p.name for p in (tmp_path / "wiki-manual").iterdir()) == ["train.tsv"]
    (only,) = rows(tmp_path / "wiki-manual" / "train.tsv")
    assert len(only) == 6 and only[3] == "Owls hunt at night."
