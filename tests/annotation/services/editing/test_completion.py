"""Marking a document pair complete with no links asks first (issue 27 item 7): one key press made
every pair of an empty article "not aligned" gold."""
from __future__ import annotations

import pytest

from annotation.models import ArticleCompletion
from annotation.services.editing import article_alignment as aa
from annotation.services.editing import completion as ac
from tests import factories


@pytest.fixture
def article(project):
    project.config = {"qc": {"min_seconds": 0, "test_every": 0}}
    project.save()
    return factories.make_article(project, "Flood", {"adv": [["C0 a.", "C1 b."], ["C2 c.", "C3 d."]],
                                                     "int": [["S0 a.", "S1 b."], ["S2 c."]]})


@pytest.fixture
def docs(article):
    return aa.resolve_documents(article, None, None)


def test_an_empty_document_pair_is_not_marked_complete_without_confirmation(users, article, docs):
    with pytest.raises(ac.EmptyCompletion) as refused:
        ac.mark_complete(users["anna"], article, *docs)
    assert refused.value.pairs == 4 * 3 and "all 12 of its sentence pairs" in str(refused.value)
    assert not ArticleCompletion.objects.exists()
    _, created = ac.mark_complete(users["anna"], article, *docs, allow_empty=True)
    assert created and ArticleCompletion.objects.count() == 1


def test_links_removed_down_to_none_still_ask_and_one_link_does_not(users, article, docs):
    anna = users["anna"]
    aa.save_links(anna, article, *docs, None, [{"complex": [0], "simple": [0]}])
    assert ac.not_aligned_if_completed(anna, *docs) == 11
    aa.save_links(anna, article, *docs, None, [], removed=[{"complex": 0, "simple": 0}])  # labelled, but no link left
    with pytest.raises(ac.EmptyCompletion):
        ac.mark_complete(anna, article, *docs)
    aa.save_links(anna, article, *docs, None, [{"complex": [1], "simple": [1]}])
    assert ac.mark_complete(anna, article, *docs)[1] is True
