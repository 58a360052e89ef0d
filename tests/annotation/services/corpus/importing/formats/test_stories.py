"""CNN/DailyMail-style ``.story`` files."""
from __future__ import annotations

import pytest

from annotation.models import Article, Document
from annotation.services.corpus.importing import import_files

pytestmark = pytest.mark.django_db

STORY = b"""(CNN) -- The bridge reopened on Monday. Drivers cheered as the barriers came down.

Repairs took nine months and cost $4 million.

@highlight

The bridge reopened on Monday after nine months

@highlight

Repairs cost $4 million. Drivers cheered
"""


def test_the_body_becomes_the_document_and_the_highlights_the_summary(project):
    result = import_files(project, [("cnn/0a1b2c.story", STORY)])
    assert (result.format, result.articles, result.documents, result.sentences, result.pairs) == ("stories", 1, 2, 5, 0)
    article = Article.objects.get(title="0a1b2c")
    assert list(article.documents.values_list("level", "rank")) == [("document", 0), ("summary", 1)]
    body = Document.objects.get(article=article, level="document")
    assert body.paragraphs.count() == 2
    assert list(body.sentences.values_list("text", flat=True)) == [
        "(CNN) -- The bridge reopened on Monday.", "Drivers cheered as the barriers came down.",
        "Repairs took nine months and cost $4 million.",
    ]


def test_each_highlight_is_one_sentence_in_its_own_paragraph_as_written(project):
    import_files(project, [("s.story", STORY)])
    summary = Document.objects.get(article__title="s", level="summary")
    assert summary.paragraphs.count() == 2
    assert list(summary.sentences.values_list("text", flat=True)) == [
        "The bridge reopened on Monday after nine months", "Repairs cost $4 million. Drivers cheered",
    ]


def test_highlights_without_blank_lines_between_them_work_too(project):
    story = b"Body sentence one. Body two.\n@highlight\nFirst point\n@highlight\nSecond point\n"
    result = import_files(project, [("t.story", story)])
    assert result.sentences == 4
