"""Which document pairs are exhaustively annotated (``review.exhaustive``): those an annotator declared
complete (not an excluded one), and those whose imported gold was declared exhaustive — or, imported
without a recorded meaning, any document pair with imported gold."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, Article, ArticleCompletion
from annotation.services.review import exhaustive, qc
from tests import factories

pytestmark = pytest.mark.django_db


def _article(project, title):
    article = factories.make_article(project, title, {"adv": [["A."]], "int": [["B."]], "ele": [["C."]]})
    return article, *article.documents.order_by("rank")


def test_a_completion_counts_unless_its_annotator_was_excluded(project, users):
    article, adv, int_, _ = _article(project, "Bees")
    for who in ("anna", "rita"):
        ArticleCompletion.objects.create(article=article, complex_document=adv, simple_document=int_,
                                         annotator=users[who])
    assert exhaustive.exhaustive_pairs(project) == [
        exhaustive.ExhaustivePair(article.pk, adv.pk, int_.pk, [users["anna"].pk, users["rita"].pk], False)]
    qc.exclude(users["anna"], project, "low accuracy")
    assert exhaustive.exhaustive_pairs(project)[0].annotators == [users["rita"].pk]


def test_imported_gold_counts_by_the_meaning_the_import_recorded(project):
    declared, adv, int_, ele = _article(project, "Declared")
    Article.objects.filter(pk=declared.pk).update(meta={"gold_import": {"meaning": "exhaustive",
                                                                        "document_pairs": [["adv", "ele"]]}})
    sparse, *_ = _article(project, "Sparse")
    Article.objects.filter(pk=sparse.pk).update(meta={"gold_import": {"meaning": "sparse", "document_pairs": []}})
    old, o_adv, o_int, _ = _article(project, "Unrecorded")
    pair = factories.make_pair(article=old, complex_document=o_adv, simple_document=o_int, complex_key="0",
                               simple_key="0", origin="import")
    Adjudication.objects.create(pair=pair, value="aligned", provenance=Adjudication.IMPORTED)
    assert exhaustive.imported_exhaustive(project) == {(declared.pk, adv.pk, ele.pk), (old.pk, o_adv.pk, o_int.pk)}
    assert [p.imported for p in exhaustive.exhaustive_pairs(project)] == [True, True]
    assert exhaustive.exhaustive_articles(project) == {declared.pk, old.pk}
