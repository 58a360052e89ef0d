"""Bounds on what one request computes or returns for an article (``corpus.article_size``): the sentences
of a document it sends and the complex × simple cells it compares, refused with 413 naming the setting."""
from __future__ import annotations

import pytest

from annotation.services.corpus import article_size
from annotation.services.corpus.article_size import ArticleTooLarge
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def docs(project):
    article = factories.make_article(project, "Bees", {"adv": [["A.", "B.", "C."]], "ele": [["D.", "E."]]})
    return tuple(article.documents.order_by("rank"))


def test_documents_within_the_limit_give_their_counts(docs, settings):
    settings.ARTICLE_MAX_SENTENCES = 3
    assert article_size.check_documents(*docs) == (3, 2)


def test_a_document_over_the_limit_is_refused_naming_its_side_and_the_setting(docs, settings):
    settings.ARTICLE_MAX_SENTENCES = 2
    with pytest.raises(ArticleTooLarge) as refused:
        article_size.check_documents(*docs)
    assert str(refused.value) == ("the complex document (adv) has 3 sentences, too many to send at once; "
                                  "the limit is ARTICLE_MAX_SENTENCES=2")
    assert (refused.value.status, refused.value.payload()["limit"]) == (413, "ARTICLE_MAX_SENTENCES")


def test_the_similarity_matrix_is_bounded_by_its_cells(docs, settings):
    settings.ARTICLE_MAX_SIMILARITY_CELLS = 6
    article_size.check_similarity(*docs)  # 3 × 2 = 6 cells
    settings.ARTICLE_MAX_SIMILARITY_CELLS = 5
    with pytest.raises(ArticleTooLarge, match=r"comparing 3 × 2 sentences \(6\) is too much for one request"):
        article_size.check_similarity(*docs)


def test_the_page_shows_at_least_one_sentence(settings):
    settings.ARTICLE_PAGE_SENTENCES = 0
    assert article_size.page_sentences() == 1
