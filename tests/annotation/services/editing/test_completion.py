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


@pytest.mark.backend  # the lock both take is a no-op on SQLite: CI runs this there too
def test_removing_the_last_link_of_a_complete_pair_asks_first_and_writes_nothing(users, article, docs):
    """Issue 36 item 13: complete with one link, then remove it — the pair stayed complete with no link
    and no question (every one of its pairs silently "not aligned" gold)."""
    anna = users["anna"]
    aa.save_links(anna, article, *docs, None, [{"complex": [0], "simple": [0]}])
    ac.mark_complete(anna, article, *docs)
    before = aa.version(anna, *docs)
    with pytest.raises(ac.EmptyCompletion) as refused:
        aa.save_links(anna, article, *docs, None, [], removed=[{"complex": 0, "simple": 0}])
    assert refused.value.pairs == 12 and refused.value.status == 409
    assert aa.version(anna, *docs) == before  # the link is still there
    assert [(link.complex, link.simple) for link in aa.own_links(anna, *docs, article.project.label_scheme)] == [(0, 0)]
    saved = aa.save_links(anna, article, *docs, None, [], removed=[{"complex": 0, "simple": 0}], allow_empty=True)
    assert saved["not_aligned"] == 1 and ArticleCompletion.objects.count() == 1  # confirmed: as asked


@pytest.mark.backend
def test_the_api_answers_409_empty_when_a_save_empties_a_complete_pair(api, users, article, docs):
    client, url = api(users["anna"]), f"/api/articles/{article.pk}/alignment/"
    assert client.put(url, {"links": [{"complex": [0], "simple": [0]}]}, format="json").status_code == 200
    assert client.post(url + "completion/", {}, format="json").status_code == 201
    body = {"links": [], "removed": [{"complex": 0, "simple": 0}]}
    refused = client.put(url, body, format="json")
    assert refused.status_code == 409 and refused.json()["code"] == "empty", refused.content
    assert refused.json()["not_aligned"] == 12
    assert [link["complex"] for link in client.get(url).json()["links"]] == [[0]]
    assert client.put(url, {**body, "empty": True}, format="json").status_code == 200
    assert client.get(url).json()["links"] == [] and ArticleCompletion.objects.count() == 1


@pytest.mark.services
def test_marking_complete_and_removing_the_last_link_in_parallel_never_leave_a_complete_pair_without_links(postgres_db):
    """Issue 36 item 13 under real concurrency (PostgreSQL, a connection per thread): in 20 of 20
    parallel trials the pair ended complete with 0 links and nobody was asked. Both now take the same
    lock: whichever comes second is refused (409 empty)."""
    from tests.annotation.test_concurrency import in_threads

    anna = factories.make_user("anna")
    project = factories.make_project("Parallel", anna="annotator")
    project.config = {"qc": {"min_seconds": 0, "test_every": 0}}
    project.save()
    for trial in range(6):
        article = factories.make_article(project, f"Flood {trial}", {"adv": [["C0 a.", "C1 b."]], "int": [["S0 a."]]})
        docs = aa.resolve_documents(article, None, None)
        aa.save_links(anna, article, *docs, None, [{"complex": [0], "simple": [0]}])

        def act(i: int, article=article, docs=docs):
            try:
                if i == 0:
                    return ac.mark_complete(anna, article, *docs)[1]
                return aa.save_links(anna, article, *docs, None, [], removed=[{"complex": 0, "simple": 0}])["links"]
            except ac.EmptyCompletion:
                return "asked"

        results = in_threads(2, act)
        links = aa.own_links(anna, *docs, project.label_scheme)
        complete = ArticleCompletion.objects.filter(complex_document=docs[0], simple_document=docs[1]).exists()
        assert not (complete and not links), (trial, results)
        assert "asked" in results, (trial, results)
