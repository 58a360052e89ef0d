"""Checks shared by every format: sizes, empty and binary files, UTF-8 decoding, ignorable names."""
from __future__ import annotations

from django.conf import settings

from annotation.services.corpus.importing.problems import Problems

# A text file has (almost) no control characters other than whitespace.
_TEXT_CONTROLS = {"\t", "\n", "\r", "\f", "\v"}
MAX_CONTROL_RATIO = 0.05
_SAMPLE_CHARS = 65536


def max_file_bytes() -> int:
    return int(settings.MAX_UPLOAD_BYTES)


def max_total_bytes() -> int:
    """Total for one import: ``settings.MAX_IMPORT_BYTES`` when set, else 4 × ``MAX_UPLOAD_BYTES``."""
    return int(getattr(settings, "MAX_IMPORT_BYTES", 0) or 4 * max_file_bytes())


def human_size(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)  # pragma: no cover


def is_ignorable(name: str) -> bool:
    """Hidden files and folders (``.DS_Store``, ``.git/``) and macOS archive debris (``__MACOSX/``)."""
    parts = [p for p in name.replace("\\", "/").split("/") if p]
    return any(p.startswith(".") or p == "__MACOSX" for p in parts)


def check_file_size(name: str, size: int, problems: Problems) -> bool:
    limit = max_file_bytes()
    if size > limit:
        problems.add(name, f"file is {human_size(size)}, over the {human_size(limit)} limit per file (MAX_UPLOAD_BYTES)")
        return False
    return True


def check_sizes(files: list[tuple[str, bytes]], problems: Problems) -> None:
    """Every file within the per-file limit and the whole import within the per-import limit."""
    for name, data in files:
        check_file_size(name, len(data), problems)
    total, limit = sum(len(d) for _, d in files), max_total_bytes()
    if total > limit:
        problems.add("", f"the import totals {human_size(total)}, over the {human_size(limit)} limit per import")


def decode(name: str, data: bytes, problems: Problems) -> str | None:
    """UTF-8 text of a file (a byte-order mark is dropped), or None after reporting why not."""
    if not data.strip():
        problems.add(name, "file is empty")
        return None
    if b"\x00" in data:
        offset = data.index(b"\x00")
        problems.add(name, f"binary file (NUL byte at byte offset {offset}); expected UTF-8 text")
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problems.add(
            name,
            f"not valid UTF-8 at byte offset {exc.start} (byte 0x{data[exc.start]:02x}); save the file as UTF-8",
            line=line,
        )
        return None
    sample = text[:_SAMPLE_CHARS]
    controls = sum(1 for ch in sample if ord(ch) < 32 and ch not in _TEXT_CONTROLS)
    if controls / len(sample) > MAX_CONTROL_RATIO:
        problems.add(name, f"binary file ({controls} control characters in the first {len(sample)}); expected text")
        return None
    if not text.strip():
        problems.add(name, "file is empty")
        return None
    return text


def lines_of(text: str) -> list[str]:
    """Lines without their terminators; a final newline does not start another line."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines
