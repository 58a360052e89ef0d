"""``parallel`` (``export/formats/parallel.py``): training pairs one per line (``.src``/``.dst``), and the simple
sentences aligned to the same complex sentence joined (``.joined.*``)."""
from __future__ import annotations

import pytest

from annotation.services.export.formats.parallel import ParallelWriter
from tests.annotation.services.export.formats.helpers import batch, record
from tests.annotation.services.export.helpers import run

pytestmark = pytest.mark.django_db


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
    from tests.annotation.services.export.conftest import gold, make_pair

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


def test_only_linking_pairs_are_written_and_a_batch_without_one_opens_no_file(tmp_path):
    writer = ParallelWriter(tmp_path, ["train"])
    unlinked = [record([1], [2], "not")]
    writer.write(batch(unlinked), unlinked)
    assert writer.close() == [] and not (tmp_path / "parallel").exists()
    writer = ParallelWriter(tmp_path, ["train"])
    records = [record([0], [1], "aligned"), record([0], [0], "aligned-or-partial"), record([1], [2], "not")]
    writer.write(batch(records), records)
    writer.close()
    folder = tmp_path / "parallel"
    assert (folder / "train.dst").read_text().splitlines() == ["They hear very well.", "Owls hunt at night."]
    # joined in document order, whatever order the pairs came in
    assert (folder / "train.joined.dst").read_text() == "Owls hunt at night. They hear very well.\n"
    assert (folder / "train.joined.src").read_text() == "Owls, which hunt at night, have exceptional hearing.\n"
