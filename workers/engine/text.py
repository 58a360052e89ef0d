"""Paragraph and sentence splitting (language-aware, via pysbd).

Used by the engine for ``{"text": ...}`` documents and by the corpus importers, so both split alike.
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import pysbd

SUPPORTED_LANGUAGES: tuple[str, ...] = ("en", "fr", "es", "de", "it", "nl", "pt", "ru")

_BLANK_LINE = re.compile(r"\n\s*\n")


def split_paragraphs(text: str, *, single_newline: bool | None = None) -> list[str]:
    """Split ``text`` into paragraphs.

    Paragraphs are separated by blank lines; a text without any blank line is split on single
    newlines instead (one paragraph per line), which is how many corpora are distributed.
    ``single_newline`` forces one behaviour or the other.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    if not text:
        return []
    if single_newline is None:
        single_newline = _BLANK_LINE.search(text) is None
    parts = text.split("\n") if single_newline else _BLANK_LINE.split(text)
    return [" ".join(p.split()) for p in parts if p.strip()]


@lru_cache(maxsize=16)
def _segmenter(language: str) -> pysbd.Segmenter:
    return pysbd.Segmenter(language=language, clean=False)


def split_sentences(paragraph: str, language: str = "en") -> list[str]:
    """Split one paragraph into sentences with the rules of ``language`` (ISO 639-1).

    Raises:
        ValueError: the language is not supported (the message lists the supported ones).
    """
    if language not in SUPPORTED_LANGUAGES:
        raise ValueError(
            f"unsupported language {language!r}; choose one of: {', '.join(SUPPORTED_LANGUAGES)}"
        )
    return [s.strip() for s in _segmenter(language).segment(paragraph) if s.strip()]


def split_document(text: str, language: str = "en") -> list[list[str]]:
    """Paragraphs of sentences for a raw text."""
    return [split_sentences(p, language) for p in split_paragraphs(text)]


def normalise(text: str, *, keep_punctuation: bool = False) -> str:
    """``text`` for comparing texts: Unicode NFKC, case-folded, punctuation dropped, whitespace
    collapsed. Two sides that normalise alike are *identical* (nothing was simplified).

    The one text normalisation of the app and the engine. ``keep_punctuation=True`` keeps the
    punctuation (matching a sentence against an evaluation set or a reference corpus, where
    "Yes." and "Yes?" are different sentences).

    Example:
        >>> normalise("  The  ﬁrst  CAFÉ, here! ")
        'the first café here'
        >>> normalise("  The  ﬁrst  CAFÉ, here! ", keep_punctuation=True)
        'the first café, here!'
    """
    # ASCII text is its own NFKC form and casefolds as it lowercases (the export normalises both sides of
    # a million pairs: issue 37); punctuation is replaced through a table of code points built as met
    folded = text.lower() if text.isascii() else unicodedata.normalize("NFKC", text).casefold()
    if not keep_punctuation:
        folded = folded.translate(_PUNCTUATION_AS_SPACE)
    return " ".join(folded.split())


class _PunctuationTable(dict):
    """``str.translate`` table: a punctuation code point (Unicode category ``P*``) → a space, any other to
    itself; each code point's category is looked up once, the first time it is met."""

    def __missing__(self, code: int) -> int:
        self[code] = mapped = 32 if unicodedata.category(chr(code)).startswith("P") else code
        return mapped


_PUNCTUATION_AS_SPACE = _PunctuationTable()


def is_identical(complex_text: str, simple_text: str) -> bool:
    """Whether the two sides of a pair are the same text after :func:`normalise`."""
    return normalise(complex_text) == normalise(simple_text)
