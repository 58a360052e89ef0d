"""Word tokenisation and word-frequency lookups shared by the simplicity attributes.

Frequencies come from the ``wordfreq`` package (offline data shipped in the wheel): Zipf values
(log10 of frequency per billion words, about 0–8) and frequency ranks.
"""
from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["words", "content_words", "zipf", "word_rank", "stopwords"]

_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*", re.UNICODE)


def words(text: str, lowercase: bool = True) -> list[str]:
    """Alphabetic words of ``text`` (digits and punctuation dropped; ``don't``/``well-known`` kept whole).

    Example:
        >>> words("Hello, well-known world 42!")
        ['hello', 'well-known', 'world']
    """
    found = _WORD.findall(text)
    return [w.lower() for w in found] if lowercase else found


@lru_cache(maxsize=8)
def stopwords(language: str = "en", n: int = 100) -> frozenset[str]:
    """The ``n`` most frequent words of ``language`` — a language-neutral stop-word list."""
    import wordfreq

    return frozenset(wordfreq.top_n_list(language, n))


def content_words(text: str, language: str = "en") -> list[str]:
    """:func:`words` minus the language's stop words."""
    stop = stopwords(language)
    return [w for w in words(text) if w not in stop]


@lru_cache(maxsize=200_000)
def zipf(word: str, language: str = "en") -> float:
    """Zipf frequency of ``word`` (0 when unknown)."""
    import wordfreq

    return float(wordfreq.zipf_frequency(word, language))


@lru_cache(maxsize=8)
def _ranks(language: str, n: int) -> dict[str, int]:
    import wordfreq

    return {w: i + 1 for i, w in enumerate(wordfreq.top_n_list(language, n))}


def word_rank(word: str, language: str = "en", vocabulary: int = 100_000) -> int | None:
    """1-based frequency rank of ``word`` among the ``vocabulary`` most frequent words, else None."""
    return _ranks(language, vocabulary).get(word.lower())
