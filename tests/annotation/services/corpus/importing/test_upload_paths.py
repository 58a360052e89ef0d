"""An upload's file names in its staged folder (``importing.upload_paths``): relative paths kept for a folder,
file names otherwise, and every name that could leave the folder or collide refused."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from annotation.services.corpus.importing.problems import CorpusImportError
from annotation.services.corpus.importing.upload_paths import upload_names


def files(*names):
    return [SimpleNamespace(name=n) for n in names]


def test_a_folder_keeps_its_relative_paths_cleaned_and_files_their_names():
    assert upload_names(files("0000.parquet", "x"), ["./manual//dev/0000.parquet", "manual\\x"]) == [
        "manual/dev/0000.parquet", "manual/x"]
    assert upload_names(files("/tmp/a.jsonl", "b.tsv")) == ["a.jsonl", "b.tsv"]


@pytest.mark.parametrize("path", ["/etc/passwd", "../up.jsonl", "a/../../b", "c:/x", "\\server\\x", "a\x00b"])
def test_a_path_leaving_the_folder_is_refused(path):
    with pytest.raises(CorpusImportError, match="is not a relative path inside the uploaded folder"):
        upload_names(files("f"), [path])


def test_paths_must_be_one_per_file_and_names_unique():
    with pytest.raises(CorpusImportError, match="gives 1 relative paths for 2 files"):
        upload_names(files("a", "b"), ["a"])
    with pytest.raises(CorpusImportError, match="two uploaded files have this path"):
        upload_names(files("a", "b"), ["d/a", "d/a"])
    with pytest.raises(CorpusImportError, match="files of different folders"):
        upload_names(files("x/a.jsonl", "y/a.jsonl"))
    with pytest.raises(CorpusImportError, match="is a file and a folder of the upload"):
        upload_names(files("a", "b"), ["d", "d/b"])
    with pytest.raises(CorpusImportError, match="no usable name"):
        upload_names(files(""))
