"""Reading import inputs: a file, a folder, or a .zip / .tar(.gz) archive, as (relative name, bytes)."""
from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

from annotation.services.corpus.importing.problems import CorpusImportError, Problems
from annotation.services.corpus.importing.validation import check_file_size, is_ignorable, max_total_bytes

ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz", ".tar")


def is_archive(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def _safe_member_name(name: str) -> str | None:
    """The member's relative posix path, or None if it could escape the extraction folder."""
    if not name or "\\" in name or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return None
    parts = PurePosixPath(name).parts
    if any(p == ".." for p in parts):
        return None
    cleaned = "/".join(p for p in parts if p not in ("", "."))
    return cleaned or None


def _members_zip(archive: str, data: bytes, problems: Problems) -> list[tuple[str, bytes]]:
    out: list[tuple[str, bytes]] = []
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        problems.add(archive, f"not a readable zip archive ({exc})")
        return out
    with zf:
        infos = [i for i in zf.infolist() if not i.is_dir()]
        for info in infos:
            if _safe_member_name(info.filename) is None:
                problems.add(archive, f"unsafe path {info.filename!r} in archive (path traversal); nothing was extracted")
        if problems:
            return out
        total = 0
        for info in infos:
            name = _safe_member_name(info.filename) or ""
            if is_ignorable(name):
                continue
            shown = f"{archive}/{name}"
            if not check_file_size(shown, info.file_size, problems):
                continue
            total += info.file_size
            if total > max_total_bytes():
                problems.add(archive, "archive contents exceed the limit per import")
                return out
            with zf.open(info) as fh:
                out.append((name, fh.read()))
    return out


def _members_tar(archive: str, data: bytes, problems: Problems) -> list[tuple[str, bytes]]:
    out: list[tuple[str, bytes]] = []
    try:
        tf = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")
    except (tarfile.TarError, EOFError, OSError) as exc:
        problems.add(archive, f"not a readable tar archive ({exc})")
        return out
    with tf:
        members = tf.getmembers()
        for m in members:
            if m.isdir():
                continue
            if _safe_member_name(m.name) is None:
                problems.add(archive, f"unsafe path {m.name!r} in archive (path traversal); nothing was extracted")
            elif not m.isfile():
                problems.add(archive, f"{m.name!r} is a link or special file; archives may hold only regular files")
        if problems:
            return out
        total = 0
        for m in members:
            if not m.isfile():
                continue
            name = _safe_member_name(m.name) or ""
            if is_ignorable(name):
                continue
            if not check_file_size(f"{archive}/{name}", m.size, problems):
                continue
            total += m.size
            if total > max_total_bytes():
                problems.add(archive, "archive contents exceed the limit per import")
                return out
            fh = tf.extractfile(m)
            out.append((name, fh.read() if fh else b""))
    return out


def expand_archives(files: list[tuple[str, bytes]], problems: Problems) -> list[tuple[str, bytes]]:
    """Replace every archive among ``files`` by its members (sorted by name); other files pass through."""
    out: list[tuple[str, bytes]] = []
    for name, data in files:
        if not is_archive(name):
            out.append((name, data))
            continue
        members = _members_zip(name, data, problems) if name.lower().endswith(".zip") else _members_tar(name, data, problems)
        nested = [m for m, _ in members if is_archive(m)]
        if nested:
            problems.add(name, f"archives inside archives are not supported: {', '.join(nested[:5])}")
        out.extend(sorted(members))
    return out


def read_path(path: str | Path) -> list[tuple[str, bytes]]:
    """The files to import from ``path``: a file, a folder (recursively, sorted, hidden files
    skipped) or a .zip/.tar.gz archive, as ``(name relative to the folder/archive, bytes)``.

    Raises:
        CorpusImportError: the path does not exist, a file is too large, or an archive is unsafe.
    """
    path = Path(path)
    problems = Problems()
    if path.is_dir():
        files: list[tuple[str, bytes]] = []
        for p in sorted(path.rglob("*")):
            rel = p.relative_to(path).as_posix()
            if not p.is_file() or is_ignorable(rel):
                continue
            if check_file_size(rel, p.stat().st_size, problems):
                files.append((rel, p.read_bytes()))
        problems.raise_if_any()
        if not files:
            raise CorpusImportError.one(str(path), "folder holds no files to import")
        return files
    if not path.is_file():
        raise CorpusImportError.one(str(path), "no such file or folder")
    size = path.stat().st_size
    if is_archive(path.name):
        if size > max_total_bytes():
            raise CorpusImportError.one(path.name, "archive is over the limit per import")
    elif not check_file_size(path.name, size, problems):
        problems.raise_if_any()
    files = [(path.name, path.read_bytes())]
    if is_archive(path.name):
        files = expand_archives(files, problems)
        problems.raise_if_any()
    return files
