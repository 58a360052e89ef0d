"""What every export writer shares (``export/formats/base.py``): one-line text, split files opened with their
first line (never an empty split file), and ``pair_dict``."""
from __future__ import annotations

import pytest

from annotation.services.export.formats.base import LINKING, Writer, clean_line, pair_dict
from tests.annotation.services.export.formats.helpers import batch, record


class Lines(Writer):
    folder = "lines"

    def write(self, batch, records) -> None:
        for r in records:
            self._file(f"{batch.split}.txt").write(clean_line(r.simple) + "\n")


@pytest.mark.parametrize("text,line", [
    ("Owls hunt.", "Owls hunt."),
    ("Owls\thunt\nat  night.", "Owls hunt at night."),
    ("Owls\u2028hunt.", "Owls hunt."),
    ("Owls  hunt.", "Owls  hunt."),  # a line without a break is kept exactly as stored
])
def test_clean_line_makes_one_line_without_tabs_and_leaves_other_text_exact(text, line):
    assert clean_line(text) == line


def test_a_split_file_is_opened_with_its_first_line_and_close_returns_what_was_written(tmp_path):
    writer = Lines(tmp_path, ["train", "dev", "test"])
    writer.open()
    assert not (tmp_path / "lines").exists()
    writer.write(batch([record([0], [0])]), [record([0], [0])])
    writer.write(batch([record([1], [2])], split="test"), [record([1], [2], split="test")])
    writer.write(batch([record([1], [2])]), [record([1], [2])])
    assert writer.close() == [tmp_path / "lines" / "train.txt", tmp_path / "lines" / "test.txt"]
    assert (tmp_path / "lines" / "train.txt").read_text() == "Owls hunt at night.\nThey live everywhere.\n"
    assert sorted(p.name for p in (tmp_path / "lines").iterdir()) == ["test.txt", "train.txt"]


def test_a_writer_says_nothing_of_completeness_or_left_out_pairs_unless_its_format_does(tmp_path):
    writer = Writer.for_export(tmp_path, ["train"], project=None, options=None)
    assert type(writer) is Writer and writer.root == tmp_path
    assert writer.complete_back() is None and writer.left_out() == {} and writer.names("train") == []
    with pytest.raises(NotImplementedError):
        writer.write(batch([]), [])


def test_pair_dict_names_a_stored_pair_by_id_and_a_derived_one_by_its_sources():
    stored = pair_dict(record([0], [0, 1], "partial", votes=[{"annotator": "a1", "value": "partial"}]))
    assert stored["id"] == "p100" and stored["complex_ids"] == [0] and stored["simple_ids"] == [0, 1]
    assert stored["simple"] == "Owls hunt at night. They hear very well." and stored["class"] == "partial"
    assert stored["vote_count"] == 1
    derived = pair_dict(record([0], [0], pair_id=None, derived=True, derived_from=[7, 9]))
    assert derived["id"] == "d7-9" and derived["pair"] is None and derived["derived_from"] == [7, 9]
    assert "aligned" in LINKING and "partial" in LINKING and "not" not in LINKING
