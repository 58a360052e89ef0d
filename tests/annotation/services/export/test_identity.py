"""What an imported file said about its own rows (``export.identity``): each document's sentence ids, the GLEU
cells and the row order, kept only while the documents still have the sentences they were given for."""
from __future__ import annotations

import pytest

from annotation.models import Article, Document
from annotation.services.corpus.importing.formats.wiki_manual import GLEU_KEY, IDS_KEY, ORDER_KEY
from annotation.services.export.identity import SourceIdentity, source_identity
from annotation.services.export.records import ArticleBatch
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def article(project):
    article = factories.make_article(project, "Bees", {"adv": [["Bees die.", "Why?"]], "ele": [["Bees die."]]})
    c, s = article.documents.order_by("rank")
    Document.objects.filter(pk=c.pk).update(meta={IDS_KEY: [[0, 3], [0, 4]]})
    Document.objects.filter(pk=s.pk).update(meta={IDS_KEY: [[1, 0]]})
    Article.objects.filter(pk=article.pk).update(meta={GLEU_KEY: {"adv|ele": {"0,0": "1.0"}},
                                                       ORDER_KEY: {"adv|ele": [[0, 0]]}})
    return article


def _batch(article, paragraphs_of) -> ArticleBatch:
    docs = {d.pk: {"level": d.level, "rank": d.rank, "paragraphs": paragraphs_of(d)}
            for d in article.documents.order_by("rank")}
    return ArticleBatch(article.pk, article.title, "train", docs, [])


def test_the_kept_ids_cells_and_order_come_back_for_unchanged_documents(article):
    kept = source_identity(_batch(article, lambda d: [[s.text for s in d.sentences.order_by("index")]]))
    c, s = article.documents.order_by("rank")
    assert kept.sentence_ids(c.pk, "adv") == ["Bees-adv-0-3", "Bees-adv-0-4"]
    assert kept.sentence_ids(s.pk, "ele") == ["Bees-ele-1-0"]
    assert kept.of_pair("adv", "ele") == ({"0,0": "1.0"}, [[0, 0]])
    assert kept.of_pair("adv", "int") == ({}, None)


def test_a_document_whose_sentences_changed_keeps_no_ids_and_the_article_no_cells(article):
    kept = source_identity(_batch(article, lambda d: [["one", "two", "three"]]))  # no longer the imported counts
    assert kept.ids == {} and kept.gleu == {} and kept.order == {}


def test_an_article_typed_in_has_no_identity(project):
    typed = factories.make_article(project, "Owls", {"adv": [["Owls hoot."]], "ele": [["Owls hoot."]]})
    kept = source_identity(_batch(typed, lambda d: [["Owls hoot."]]))
    assert kept == SourceIdentity("Owls") and kept.sentence_ids(1, "adv") is None
