"""Checks shared by every format: sizes, empty and binary files, UTF-8 decoding, ignorable names.

:func:`check_file` streams a file once before anything is parsed (a line at a time, never the
whole file in memory) and reports what :func:`decode` reports for a text in memory, plus the
``IMPORT_MAX_LINES`` limit.
"""
from __future__ import annotations

from django.conf import settings

from annotation.services.corpus.importing.base import BOM, InputFile, ParsedArticle, split_line
from annotation.services.corpus.importing.limits import Limits, over
from annotation.services.corpus.importing.problems import Problems

# A text file has (almost) no control characters other than whitespace.
_TEXT_CONTROLS = {"\t", "\n", "\r", "\f", "\v"}
MAX_CONTROL_RATIO = 0.05
_SAMPLE_CHARS = 65536
NUL = b"\x00"


def max_file_bytes() -> int:
    return int(settings.MAX_UPLOAD_BYTES)


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
        problems.add(name, f"file is {human_size(size)}, over the {human_size(limit)} limit per file "
                           f"(MAX_UPLOAD_BYTES={limit})", limit="MAX_UPLOAD_BYTES")
        return False
    return True


def check_sizes(files: list[InputFile], problems: Problems, limits: Limits) -> None:
    """Every file within the per-file limit; the import within the per-import limits (bytes, files)."""
    for f in files:
        check_file_size(f.name, f.size, problems)
    total = sum(f.size for f in files)
    if total > limits.total_bytes:
        problems.add("", f"the import totals {human_size(total)}, over the {human_size(limits.total_bytes)} limit per "
                         f"import (IMPORT_MAX_BYTES={limits.total_bytes})", limit="IMPORT_MAX_BYTES")
    if len(files) > limits.files:
        problems.add("", over(f"the import holds {len(files):,} files", "IMPORT_MAX_FILES", limits.files),
                     limit="IMPORT_MAX_FILES")


def check_file(f: InputFile, problems: Problems, limits: Limits, *, empty_ok: bool = False) -> int | None:
    """Stream ``f`` once: its number of lines (as :func:`lines_of` counts them; 0 for an empty file when
    ``empty_ok``), or None after reporting why it can't be imported — empty, binary (a NUL byte, or mostly control
    characters), not UTF-8 (byte offset and line), a line longer than ``IMPORT_MAX_LINE_BYTES``
    (refused as soon as the limit is passed: the line is never held whole) or more lines than ``IMPORT_MAX_LINES``."""
    lines = offset = newlines = sample_chars = controls = 0
    content = verdict = False
    with f.open() as fh:
        head = fh.read(_SAMPLE_CHARS)
        if NUL in head:
            problems.add(f.name, f"binary file (NUL byte at byte offset {head.index(NUL)}); expected UTF-8 text")
            return None
        fh.seek(0)
        while raw := fh.readline(limits.line_bytes + 1):  # never more of a line than the limit in memory
            if len(raw) > limits.line_bytes and not raw.endswith(b"\n"):
                problems.add(f.name, over(f"line {newlines + 1:,} is longer than {human_size(limits.line_bytes)}",
                                          "IMPORT_MAX_LINE_BYTES", limits.line_bytes),
                             line=newlines + 1, limit="IMPORT_MAX_LINE_BYTES")
                return None
            if offset == 0 and raw.startswith(BOM):
                offset, raw = len(BOM), raw[len(BOM):]
            if NUL in raw:
                problems.add(f.name, f"binary file (NUL byte at byte offset {offset + raw.index(NUL)}); expected UTF-8 text")
                return None
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                problems.add(
                    f.name,
                    f"not valid UTF-8 at byte offset {offset + exc.start} (byte 0x{raw[exc.start]:02x}); save the file as UTF-8",
                    line=newlines + 1,
                )
                return None
            if not verdict:
                sample = text[: _SAMPLE_CHARS - sample_chars]
                sample_chars += len(sample)
                controls += sum(1 for ch in sample if ord(ch) < 32 and ch not in _TEXT_CONTROLS)
                if sample_chars >= _SAMPLE_CHARS:
                    verdict = True
                    if controls / sample_chars > MAX_CONTROL_RATIO:
                        break
            content = content or bool(text.strip())
            offset += len(raw)
            newlines += raw.endswith(b"\n")
            lines += len(split_line(text))
    if sample_chars and controls / sample_chars > MAX_CONTROL_RATIO:
        problems.add(f.name, f"binary file ({controls} control characters in the first {sample_chars}); expected text")
        return None
    if not content:
        if empty_ok:
            return 0
        problems.add(f.name, "file is empty")
        return None
    if lines > limits.lines:
        problems.add(f.name, over(f"file {f.name} has {lines:,} lines", "IMPORT_MAX_LINES", limits.lines),
                     limit="IMPORT_MAX_LINES")
        return None
    return lines


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


TITLE_MAX = 500
def check_article(article: ParsedArticle, limits: Limits, problems: Problems) -> bool:
    ok = True
    for d in article.documents:
        n = d.sentence_count
        if n > limits.sentences_per_document:
            where = f"document {d.level!r} of article {article.title!r}"
            problems.add(article.file, over(f"{where} has {n:,} sentences", "IMPORT_MAX_SENTENCES_PER_DOCUMENT",
                                            limits.sentences_per_document),
                         line=article.line, limit="IMPORT_MAX_SENTENCES_PER_DOCUMENT")
            ok = False
        longest = max((len(t) for p in d.paragraphs for t in p), default=0)
        if longest > limits.sentence_chars:
            problems.add(article.file, over(f"a sentence of document {d.level!r} of article {article.title!r} has "
                                            f"{longest:,} characters", "IMPORT_MAX_SENTENCE_CHARS", limits.sentence_chars),
                         line=article.line, limit="IMPORT_MAX_SENTENCE_CHARS")
            ok = False
        elif (chars := sum(len(t) for p in d.paragraphs for t in p)) > limits.document_chars:
            problems.add(article.file, over(f"document {d.level!r} of article {article.title!r} has {chars:,} characters",
                                            "IMPORT_MAX_DOCUMENT_CHARS", limits.document_chars),
                         line=article.line, limit="IMPORT_MAX_DOCUMENT_CHARS")
            ok = False
    return ok
