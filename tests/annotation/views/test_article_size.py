"""Per-article endpoints on a big article: bounded answers (413 naming the limit, or a page of
sentences), never an n × m matrix over the whole article."""
from __future__ import annotations

import tracemalloc

import pytest

from annotation.models import Document, ParagraphAlignment
from annotation.services.corpus.importing import import_files

pytestmark = pytest.mark.django_db


def parallel_article(project, lines: int):
    """One article of two ``lines``-sentence documents (a line per paragraph), as a big parallel import makes."""
    src = "".join(f"Complex sentence number {i} is here.\n" for i in range(lines)).encode()
    dst = "".join(f"Simple sentence {i}.\n" for i in range(lines)).encode()
    import_files(project, [("big.src", src), ("big.dst", dst)])
    return project.articles.get(title="big")


def measured(call):
    """The call's answer and the peak memory it allocated (after a first call has imported every module)."""
    call()
    tracemalloc.start()
    try:
        response = call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return response, peak


def test_automatic_paragraph_links_over_the_cell_limit_answer_413_without_computing(api, users, project):
    article = parallel_article(project, 2100)  # 2,100 × 2,100 sentences: 4.41 M cells, over the 4 M default
    response, peak = measured(lambda: api(users["anna"]).get(f"/api/articles/{article.pk}/paragraphs/"))
    assert response.status_code == 413
    body = response.json()
    assert body["limit"] == "ARTICLE_MAX_SIMILARITY_CELLS" and body["code"] == "too_large"
    assert "comparing 2,100 × 2,100 sentences (4,410,000)" in body["detail"]
    assert body["detail"].endswith("the limit is ARTICLE_MAX_SIMILARITY_CELLS=4000000")
    assert peak < 8 * 1024 * 1024, peak  # one float64 similarity matrix alone would be 35 MB


def test_stored_paragraph_links_of_a_big_article_are_served(api, users, project):
    article = parallel_article(project, 2100)
    c, s = article.documents.order_by("rank")
    ParagraphAlignment.objects.create(complex_paragraph=c.paragraphs.get(index=0), simple_paragraph=s.paragraphs.get(index=0),
                                      source=ParagraphAlignment.AUTO, score=0.9)
    response, peak = measured(lambda: api(users["anna"]).get(f"/api/articles/{article.pk}/paragraphs/"))
    assert response.status_code == 200
    data = response.json()
    assert data["origin"] == "stored" and data["complex"]["sentence_count"] == 2100
    assert peak < 40 * 1024 * 1024, peak


def test_saving_paragraph_links_of_a_too_big_pair_is_refused_and_nothing_changes(api, users, project, settings):
    settings.ARTICLE_MAX_SIMILARITY_CELLS = 100
    article = parallel_article(project, 11)
    response = api(users["rita"]).put(f"/api/articles/{article.pk}/paragraphs/", {"links": [{"complex": 0, "simple": 0}]},
                                      format="json")
    assert response.status_code == 413
    assert response.json()["limit"] == "ARTICLE_MAX_SIMILARITY_CELLS"
    assert not ParagraphAlignment.objects.exists()


def test_a_document_over_the_sentence_limit_is_not_sent_whole(api, users, project, settings):
    settings.ARTICLE_MAX_SENTENCES = 50
    article = parallel_article(project, 51)
    client = api(users["anna"])
    for url in (f"/api/articles/{article.pk}/alignment/", f"/api/articles/{article.pk}/paragraphs/"):
        response = client.get(url)
        assert response.status_code == 413, url
        assert response.json()["detail"] == ("the complex document (src) has 51 sentences, too many to send at once; "
                                             "the limit is ARTICLE_MAX_SENTENCES=50")


def test_a_document_s_sentences_come_a_page_at_a_time(api, users, project, settings):
    settings.ARTICLE_MAX_SENTENCES = 10
    article = parallel_article(project, 25)
    doc = Document.objects.get(article=article, level="src")
    client = api(users["anna"])
    first = client.get(f"/api/documents/{doc.pk}/").json()
    assert (len(first["sentences"]), first["offset"], first["next_offset"], first["sentence_count"]) == (10, 0, 10, 25)
    assert [s["index"] for s in first["sentences"]] == list(range(10))
    last = client.get(f"/api/documents/{doc.pk}/?offset=20&limit=1000").json()
    assert [s["index"] for s in last["sentences"]] == [20, 21, 22, 23, 24] and last["next_offset"] is None
    small = client.get(f"/api/documents/{doc.pk}/?offset=3&limit=2").json()
    assert [s["text"] for s in small["sentences"]] == ["Complex sentence number 3 is here.", "Complex sentence number 4 is here."]
    assert small["next_offset"] == 5
    assert client.get(f"/api/documents/{doc.pk}/?offset=-1").status_code == 400
