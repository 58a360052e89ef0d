"""Import inputs: a file, a folder, or a .zip / .tar(.gz) archive, as :class:`InputFile` objects.

Nothing is read whole into memory: files on disk stay where they are, and an archive's members are
extracted into the import's work folder a chunk at a time, checked as they stream against the
import's limits (``IMPORT_MAX_FILES``, ``MAX_UPLOAD_BYTES`` per member, ``IMPORT_MAX_BYTES`` in
all) — both the sizes the archive declares and the bytes it actually holds, so an archive whose
headers understate its members is refused, not unpacked.
"""
from __future__ import annotations

import tarfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from django.conf import settings

from annotation.services.corpus.importing.base import InputFile
from annotation.services.corpus.importing.limits import Limits, over
from annotation.services.corpus.importing.problems import Problems
from annotation.services.corpus.importing.validation import check_file_size, check_sizes, human_size, is_ignorable

ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz", ".tar")
CHUNK = 1024 * 1024
_READ_ERRORS = (zipfile.BadZipFile, tarfile.TarError, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError)


def is_archive(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def import_root() -> Path:
    """Where uploads and work folders live (``settings.IMPORT_DIR``, default ``var/imports``)."""
    root = Path(getattr(settings, "IMPORT_DIR", "") or Path(settings.VAR_DIR) / "imports")
    root.mkdir(parents=True, exist_ok=True)
    return root


def _safe_member_name(name: str) -> str | None:
    """The member's relative posix path, or None if it could escape the extraction folder."""
    if not name or "\\" in name or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return None
    parts = PurePosixPath(name).parts
    if any(p == ".." for p in parts):
        return None
    cleaned = "/".join(p for p in parts if p not in ("", "."))
    return cleaned or None


def _reason(exc: BaseException) -> str:
    """Why reading failed, without the server path an OS error carries (only the member is named)."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _unique_members(archive: str, names: list[tuple[str, object]], problems: Problems) -> dict[str, object]:
    """``{cleaned name: member}`` for the archive's members, or {} after reporting each name that
    two members share once cleaned (``a.jsonl``, ``./a.jsonl``, ``x//a.jsonl`` vs ``x/a.jsonl``) or
    that is both a file and a folder — one would overwrite or hide the other, so nothing is extracted."""
    by_name: dict[str, object] = {}
    for raw, member in names:
        name = _safe_member_name(raw) or ""
        if is_ignorable(name):
            continue
        if name in by_name:
            written = f" (as written: {raw!r})" if raw != name else ""
            problems.add(archive, f"two members are named {name!r}{written}; nothing was imported — "
                                  "rename or remove one of them")
            continue
        by_name[name] = member
    folders = {str(parent) for name in by_name for parent in PurePosixPath(name).parents if str(parent) != "."}
    for name in sorted(set(by_name) & folders):
        problems.add(archive, f"{name!r} is both a file and a folder in the archive; nothing was imported")
    return {} if problems else by_name


def _copy(source: BinaryIO, target: Path, limit: int) -> int:
    """Copy at most ``limit`` bytes; returns the bytes the source held (``limit + 1`` when it held more)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with target.open("wb") as out:
        while written <= limit:
            chunk = source.read(min(CHUNK, limit + 1 - written))
            if not chunk:
                break
            out.write(chunk)
            written += len(chunk)
    return written


class _Extraction:
    """Checks shared by zip and tar: member count, declared sizes, then the bytes actually read."""

    def __init__(self, archive: str, dest: Path, problems: Problems, limits: Limits) -> None:
        self.archive, self.dest, self.problems, self.limits = archive, dest, problems, limits
        self.members: list[InputFile] = []

    def too_many(self, count: str) -> None:
        self.problems.add(self.archive, over(f"archive {self.archive} holds {count} files", "IMPORT_MAX_FILES",
                                             self.limits.files), limit="IMPORT_MAX_FILES")

    def check_declared(self, members: list[tuple[str, int]]) -> list[tuple[str, int]]:
        """The members worth extracting (``(name, declared size)``), or [] after reporting why none."""
        if len(members) > self.limits.files:
            self.too_many(f"{len(members):,}")
            return []
        total = sum(size for _, size in members)
        if total > self.limits.total_bytes:
            self.problems.add(self.archive, f"archive contents exceed the limit per import: {human_size(total)} "
                                            f"unpacked (IMPORT_MAX_BYTES={self.limits.total_bytes})",
                              limit="IMPORT_MAX_BYTES")
            return []
        return [(name, size) for name, size in members if check_file_size(f"{self.archive}/{name}", size, self.problems)]

    def extract(self, name: str, declared: int, stream: BinaryIO) -> None:
        target = self.dest / name
        size = _copy(stream, target, min(declared, self.limits.file_bytes))
        if size > declared:
            self.problems.add(self.archive, f"member {name!r} holds more data than the archive declares "
                                            f"({human_size(declared)}); the archive is damaged or forged")
            return
        self.members.append(InputFile(name, size, path=target))


def _members_zip(f: InputFile, dest: Path, problems: Problems, limits: Limits) -> list[InputFile]:
    job = _Extraction(f.name, dest, problems, limits)
    with f.open() as fh:
        try:
            zf = zipfile.ZipFile(fh)
        except (zipfile.BadZipFile, OSError) as exc:
            problems.add(f.name, f"not a readable zip archive ({_reason(exc)})")
            return []
        with zf:
            infos = [i for i in zf.infolist() if not i.is_dir()]
            for info in infos:
                if _safe_member_name(info.filename) is None:
                    problems.add(f.name, f"unsafe path {info.filename!r} in archive (path traversal); nothing was extracted")
            if problems:
                return []
            by_name = _unique_members(f.name, [(i.filename, i) for i in infos], problems)
            return _extract_all(job, "zip", {n: (i.file_size, i) for n, i in by_name.items()}, zf.open)


def _extract_all(job: _Extraction, kind: str, members: dict[str, tuple[int, Any]], open_member) -> list[InputFile]:
    """Extract the members (name → declared size, archive entry) that pass the declared-size checks; nothing
    once one cannot be read."""
    for name, size in job.check_declared([(n, declared) for n, (declared, _) in members.items()]):
        try:
            member = open_member(members[name][1])
            if member is not None:  # a tar's non-file entry
                with member:
                    job.extract(name, size, member)
        except _READ_ERRORS as exc:
            job.problems.add(job.archive, f"not a readable {kind} archive: member {name!r} ({_reason(exc)})")
            return []
    return job.members


def _members_tar(f: InputFile, dest: Path, problems: Problems, limits: Limits) -> list[InputFile]:
    job = _Extraction(f.name, dest, problems, limits)
    with f.open() as fh:
        try:
            tf = tarfile.open(fileobj=fh, mode="r:*")
        except _READ_ERRORS as exc:
            problems.add(f.name, f"not a readable tar archive ({_reason(exc)})")
            return []
        with tf:
            members: list[tarfile.TarInfo] = []
            counted_all = True
            try:
                for m in tf:  # headers only; stop counting past the limit
                    if not m.isdir():
                        members.append(m)
                    if len(members) > limits.files:
                        counted_all = False
                        break
            except _READ_ERRORS as exc:
                problems.add(f.name, f"not a readable tar archive ({_reason(exc)})")
                return []
            if not counted_all:  # a tar is listed sequentially: the listing stopped past the limit
                job.too_many(f"more than {limits.files:,}")
                return []
            for m in members:
                if _safe_member_name(m.name) is None:
                    problems.add(f.name, f"unsafe path {m.name!r} in archive (path traversal); nothing was extracted")
                elif not m.isfile():
                    problems.add(f.name, f"{m.name!r} is a link or special file; archives may hold only regular files")
            if problems:
                return []
            by_name = _unique_members(f.name, [(m.name, m) for m in members], problems)
            return _extract_all(job, "tar", {n: (m.size, m) for n, m in by_name.items()}, tf.extractfile)


def expand_archives(files: list[InputFile], work: Path, problems: Problems, limits: Limits | None = None) -> list[InputFile]:
    """Replace every archive among ``files`` by its members (extracted under ``work``, sorted by
    name); hidden files are dropped, other files pass through."""
    limits = limits or Limits.from_settings()
    out: list[InputFile] = []
    for index, f in enumerate(files):
        if is_ignorable(f.name):
            continue
        if not is_archive(f.name):
            out.append(f)
            continue
        if f.size > limits.total_bytes:
            problems.add(f.name, f"archive is {human_size(f.size)}, over the limit per import "
                                 f"(IMPORT_MAX_BYTES={limits.total_bytes})", limit="IMPORT_MAX_BYTES")
            continue
        dest = work / f"archive-{index}"
        extract = _members_zip if f.name.lower().endswith(".zip") else _members_tar
        members = extract(f, dest, problems, limits)
        nested = [m.name for m in members if is_archive(m.name)]
        if nested:
            problems.add(f.name, f"archives inside archives are not supported: {', '.join(nested[:5])}")
        out.extend(sorted(members, key=lambda m: m.name))
    return out


def bytes_inputs(files: list[tuple[str, bytes]]) -> list[InputFile]:
    return [InputFile(name, len(data), data=data) for name, data in files]


def collect(files: list[InputFile], work: Path, limits: Limits) -> list[InputFile]:
    """``files`` with archives expanded, checked against the size and count limits.

    Raises:
        CorpusImportError: an unreadable or unsafe archive, or a limit exceeded.
    """
    problems = Problems()
    for f in files:  # refuse an oversized plain file before anything is unpacked
        if not is_ignorable(f.name) and not is_archive(f.name):
            check_file_size(f.name, f.size, problems)
    problems.raise_if_any()
    expanded = expand_archives(files, work, problems, limits)
    problems.raise_if_any()
    seen: set[str] = set()
    for f in expanded:  # the same name from two archives, or an archive's member and an uploaded file
        if f.name in seen:
            problems.add(f.name, "two of the files to import have this name; nothing was imported — rename one of them")
        seen.add(f.name)
    problems.raise_if_any()
    check_sizes(expanded, problems, limits)
    problems.raise_if_any()
    return expanded


__all__ = ["ARCHIVE_SUFFIXES", "bytes_inputs", "collect", "expand_archives", "import_root", "is_archive"]
