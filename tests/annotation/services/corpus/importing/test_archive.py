"""Reading inputs from disk and archives, and telling formats apart."""
from __future__ import annotations

import io
import tarfile
import zipfile

import pytest

from annotation.services.corpus.importing import CorpusImportError, detect_format, import_files, read_path


def make_zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_a_folder_is_read_recursively_sorted_with_relative_names_and_hidden_files_skipped(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "B-ele.txt").write_bytes(b"b")
    (tmp_path / "A-adv.txt").write_bytes(b"a")
    (tmp_path / ".DS_Store").write_bytes(b"\x00junk")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_bytes(b"x")
    assert read_path(tmp_path) == [("A-adv.txt", b"a"), ("sub/B-ele.txt", b"b")]


def test_a_single_file_is_read_by_its_name(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"{}\n")
    assert read_path(str(path)) == [("in.jsonl", b"{}\n")]


def test_a_zip_archive_is_read_as_its_members_without_macos_debris(tmp_path):
    path = tmp_path / "corpus.zip"
    path.write_bytes(make_zip({"corpus/X-ele.txt": b"e", "corpus/X-adv.txt": b"a", "__MACOSX/corpus/._X-adv.txt": b"\x00"}))
    assert read_path(path) == [("corpus/X-adv.txt", b"a"), ("corpus/X-ele.txt", b"e")]


def test_a_tar_gz_archive_is_read_as_its_members(tmp_path):
    path = tmp_path / "corpus.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        for name, data in {"x.src": b"a\n", "x.dst": b"b\n"}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    assert read_path(path) == [("x.dst", b"b\n"), ("x.src", b"a\n")]


def test_a_tar_with_a_symlink_is_refused(tmp_path):
    path = tmp_path / "corpus.tar"
    with tarfile.open(path, "w") as tf:
        link = tarfile.TarInfo("A-adv.txt")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        tf.addfile(link)
    with pytest.raises(CorpusImportError, match="corpus.tar: 'A-adv.txt' is a link or special file"):
        read_path(path)


def test_a_corrupt_zip_is_refused(tmp_path):
    path = tmp_path / "broken.zip"
    path.write_bytes(b"PK\x03\x04 not really")
    with pytest.raises(CorpusImportError, match="broken.zip: not a readable zip archive"):
        read_path(path)


def test_a_missing_path_is_refused(tmp_path):
    with pytest.raises(CorpusImportError, match="no such file or folder"):
        read_path(tmp_path / "nope")


def test_an_oversized_file_in_a_folder_is_refused_before_reading(tmp_path, settings):
    settings.MAX_UPLOAD_BYTES = 10
    (tmp_path / "A-adv.txt").write_bytes(b"x" * 11)
    with pytest.raises(CorpusImportError, match="A-adv.txt: file is 11 bytes, over the 10 bytes limit per file"):
        read_path(tmp_path)


@pytest.mark.parametrize(
    ("names", "fmt"),
    [
        (["a.jsonl", "b.ndjson"], "jsonl"),
        (["X-adv.txt", "X-ele.TXT"], "levels"),
        (["1.story", "2.story"], "stories"),
        (["x.src", "x.dst"], "parallel"),
        (["x.src", "x.dst", ".DS_Store"], "parallel"),
    ],
)
def test_the_format_is_detected_from_the_extensions(names, fmt):
    assert detect_format(names) == fmt


def test_detection_refuses_no_files_mixed_formats_and_unknown_extensions():
    with pytest.raises(CorpusImportError, match="no files to import"):
        detect_format([])
    with pytest.raises(CorpusImportError, match=r"mixed formats: stories \(a.story\); parallel \(x.src\)"):
        detect_format(["a.story", "x.src"])
    with pytest.raises(CorpusImportError, match=r"README: unknown extension \(none\)"):
        detect_format(["README"])


@pytest.mark.django_db
def test_an_uploaded_archive_is_expanded_before_import(project):
    files = [("upload.zip", make_zip({"A-adv.txt": b"Hard words here.", "A-ele.txt": b"Easy."}))]
    result = import_files(project, files)
    assert (result.format, result.articles, result.documents) == ("levels", 1, 2)


@pytest.mark.django_db
def test_an_archive_inside_an_archive_is_refused(project):
    files = [("outer.zip", make_zip({"inner.zip": make_zip({"A-adv.txt": b"a"})}))]
    with pytest.raises(CorpusImportError, match="outer.zip: archives inside archives are not supported: inner.zip"):
        import_files(project, files)
