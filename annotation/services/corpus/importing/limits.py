"""How big an import may be: every limit comes from a setting, and a refusal names that setting.

    >>> over("file a.jsonl has 1,200,000 lines", "IMPORT_MAX_LINES", 500000)
    'file a.jsonl has 1,200,000 lines; the limit is IMPORT_MAX_LINES=500000'

The limits (``alignapp/settings.py``, from the environment; README "Configuration"):

* ``MAX_UPLOAD_BYTES`` — one file (an archive's member included); an archive may be up to
  ``IMPORT_MAX_BYTES``.
* ``IMPORT_MAX_BYTES`` — the whole import, uncompressed (uploads are cut off at this size too): also
  the characters of every document the import produces (counted as they are read, so a metadata
  file naming one text many times is refused when the copies pass it) and the decompressed size of
  a parquet/Arrow dataset (its metadata's uncompressed sizes before a row is read, then the batches
  as they are decoded).
* ``IMPORT_MAX_FILES`` — files in one import, archive members counted.
* ``IMPORT_MAX_LINES`` — lines of one file.
* ``IMPORT_MAX_SENTENCES_PER_DOCUMENT`` — sentences of one document (one side of a JSONL record,
  one level file, one ``.src``/``.dst`` file).
* ``IMPORT_MAX_ARTICLES`` — articles in one import (a reader that gathers rows into articles, as
  ``wiki-manual`` does, refuses the row that names one too many).
* ``IMPORT_MAX_SENTENCES`` — sentences in one import, counted as the articles are produced.
* ``IMPORT_MAX_LINE_BYTES`` — bytes of one line of a file, checked while the line is read (a line
  is never read whole past it, nor parsed).
* ``IMPORT_MAX_DOCUMENT_CHARS`` — characters of one document's text (checked before it is split
  into sentences).
* ``IMPORT_MAX_SENTENCE_CHARS`` — characters of one sentence.
* ``IMPORT_BACKGROUND_BYTES`` — uploads larger than this are imported by a background job.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings


def over(what: str, setting: str, limit: int) -> str:
    """``"<what>; the limit is <SETTING>=<limit>"``: the one way a limit's refusal reads."""
    return f"{what}; the limit is {setting}={limit}"


@dataclass(frozen=True)
class Limits:
    file_bytes: int
    total_bytes: int
    files: int
    lines: int
    sentences_per_document: int
    articles: int
    background_bytes: int
    sentences: int = 500_000
    line_bytes: int = 16 * 1024 * 1024
    document_chars: int = 2_000_000
    sentence_chars: int = 20_000

    @classmethod
    def from_settings(cls) -> Limits:
        file_bytes = int(settings.MAX_UPLOAD_BYTES)
        return cls(
            file_bytes=file_bytes,
            total_bytes=int(getattr(settings, "IMPORT_MAX_BYTES", 0) or 4 * file_bytes),
            files=int(getattr(settings, "IMPORT_MAX_FILES", 10_000)),
            lines=int(getattr(settings, "IMPORT_MAX_LINES", 500_000)),
            sentences_per_document=int(getattr(settings, "IMPORT_MAX_SENTENCES_PER_DOCUMENT", 10_000)),
            articles=int(getattr(settings, "IMPORT_MAX_ARTICLES", 200_000)),
            sentences=int(getattr(settings, "IMPORT_MAX_SENTENCES", 500_000)),
            background_bytes=int(getattr(settings, "IMPORT_BACKGROUND_BYTES", 2 * 1024 * 1024)),
            line_bytes=int(getattr(settings, "IMPORT_MAX_LINE_BYTES", 16 * 1024 * 1024)),
            document_chars=int(getattr(settings, "IMPORT_MAX_DOCUMENT_CHARS", 2_000_000)),
            sentence_chars=int(getattr(settings, "IMPORT_MAX_SENTENCE_CHARS", 20_000)),
        )
