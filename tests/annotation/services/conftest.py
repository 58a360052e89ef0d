"""Helpers for the importer tests."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, Article, CandidatePair, Document, Paragraph, Sentence


def corpus_counts() -> dict[str, int]:
    return {
        "articles": Article.objects.count(),
        "documents": Document.objects.count(),
        "paragraphs": Paragraph.objects.count(),
        "sentences": Sentence.objects.count(),
        "pairs": CandidatePair.objects.count(),
        "gold": Adjudication.objects.count(),
    }


@pytest.fixture
def counts():
    """``counts()`` → how many corpus rows exist now (to check that a refused import wrote nothing)."""
    return corpus_counts
