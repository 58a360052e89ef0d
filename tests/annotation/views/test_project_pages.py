"""The project page and the article page over big inputs: a page of articles (50 at a time) and a
page of each document's sentences (``ARTICLE_PAGE_SENTENCES`` at a time), with "Page x of y" links;
a page number that is not one never fails the request."""
from __future__ import annotations

import re

import pytest

from annotation.models import Article, Document, Paragraph, Sentence
from annotation.views.pages import ARTICLES_PER_PAGE

pytestmark = pytest.mark.django_db


def many_articles(project, n: int) -> None:
    Article.objects.bulk_create([Article(project=project, title=f"Article {i:04d}") for i in range(n)])


def titles(html: str) -> list[str]:
    table = html.split('id="articles"', 1)[1].split("</table>", 1)[0]
    return re.findall(r">(Article \d{4})</a>", table)


def long_document(article: Article, level: str, rank: int, sentences: int, per_paragraph: int = 5) -> Document:
    doc = Document.objects.create(article=article, level=level, rank=rank)
    paragraphs = Paragraph.objects.bulk_create([Paragraph(document=doc, index=p)
                                                for p in range((sentences + per_paragraph - 1) // per_paragraph)])
    Sentence.objects.bulk_create([Sentence(document=doc, paragraph=paragraphs[i // per_paragraph], index=i,
                                           text=f"{level} sentence {i}.") for i in range(sentences)])
    return doc


def shown(html: str) -> dict[str, list[int]]:
    """Level → the indices of the sentences the page shows of that document."""
    out = {}
    for section in html.split('<section class="card version"')[1:]:
        level = re.search(r'data-level="([^"]+)"', section)[1]
        out[level] = [int(i) for i in re.findall(r'<span class="sent" title="sentence (\d+)">', section)]
    return out


# --- the project page --------------------------------------------------------------------------

def test_the_project_page_annotates_only_the_articles_it_shows(client, users, project):
    """Issue 37: the states (a subquery per article) were computed for every article of the project to count
    and sort them — seconds at 20,000 articles; now only the page's 50 are annotated, the count is plain."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    many_articles(project, 120)
    client.force_login(users["rita"])
    with CaptureQueriesContext(connection) as queries:
        html = client.get(f"/projects/{project.pk}/?page=2").content.decode()
    assert titles(html) == [f"Article {i:04d}" for i in range(50, 100)]
    annotating = [q["sql"] for q in queries.captured_queries if "annotation_articlecompletion" in q["sql"]
                  and "annotation_document" in q["sql"]]
    assert len(annotating) == 1 and " IN (" in annotating[0], annotating  # the page's ids, nothing else
    counts = [q["sql"] for q in queries.captured_queries if "COUNT(*)" in q["sql"] and "annotation_article" in q["sql"]]
    assert counts and not any("annotation_articlecompletion" in sql for sql in counts), counts


def test_the_project_page_shows_fifty_articles_a_page_with_page_links(client, users, project):
    many_articles(project, 120)
    client.force_login(users["anna"])
    first = client.get(f"/projects/{project.pk}/").content.decode()
    assert ARTICLES_PER_PAGE == 50
    assert titles(first) == [f"Article {i:04d}" for i in range(50)]
    assert "Articles (120)" in first and "Page 1 of 3" in first
    assert 'href="?page=2"' in first and 'rel="prev"' not in first
    second = client.get(f"/projects/{project.pk}/?page=2").content.decode()
    assert titles(second) == [f"Article {i:04d}" for i in range(50, 100)] and "Page 2 of 3" in second
    assert 'href="?page=1"' in second and 'href="?page=3"' in second
    last = client.get(f"/projects/{project.pk}/?page=3").content.decode()
    assert titles(last) == [f"Article {i:04d}" for i in range(100, 120)] and 'rel="next"' not in last


@pytest.mark.parametrize("page,expected", [("abc", 1), ("0", 3), ("-4", 3), ("", 1), ("2.5", 1),
                                           ("99", 3), ("9" * 40, 3)])
def test_a_page_that_is_not_one_shows_the_first_or_the_last_never_an_error(client, users, project, page, expected):
    many_articles(project, 120)
    client.force_login(users["anna"])
    response = client.get(f"/projects/{project.pk}/", {"page": page})
    assert response.status_code == 200
    assert f"Page {expected} of 3" in response.content.decode()


def test_a_small_project_has_no_page_links(client, users, project):
    many_articles(project, 3)
    client.force_login(users["anna"])
    html = client.get(f"/projects/{project.pk}/").content.decode()
    assert len(titles(html)) == 3 and "Page 1 of" not in html and "Articles (3)" in html


# --- the article page --------------------------------------------------------------------------

@pytest.fixture
def article(project):
    article = Article.objects.create(project=project, title="Long")
    long_document(article, "adv", 0, 25)
    long_document(article, "ele", 1, 12)
    return article


def test_the_article_page_shows_a_page_of_each_document(client, users, article, settings):
    settings.ARTICLE_PAGE_SENTENCES = 10
    client.force_login(users["anna"])
    html = client.get(f"/articles/{article.pk}/").content.decode()
    assert shown(html) == {"adv": list(range(10)), "ele": list(range(10))}
    assert "Sentences 1–10 of 25" in html and "Sentences 1–10 of 12" in html and "Page 1 of 3" in html
    second = client.get(f"/articles/{article.pk}/?page=2").content.decode()
    assert shown(second) == {"adv": list(range(10, 20)), "ele": [10, 11]}
    assert "Sentences 11–20 of 25" in second and "Sentences 11–12 of 12" in second
    third = client.get(f"/articles/{article.pk}/?page=3").content.decode()
    assert shown(third) == {"adv": list(range(20, 25)), "ele": []}
    assert "No more sentences (12 in all)" in third and 'rel="next"' not in third


@pytest.mark.parametrize("page,expected", [("x", 1), ("-1", 3), ("4", 3), ("1e3", 1)])
def test_a_bad_article_page_number_shows_the_first_or_the_last(client, users, article, settings, page, expected):
    settings.ARTICLE_PAGE_SENTENCES = 10
    client.force_login(users["anna"])
    response = client.get(f"/articles/{article.pk}/", {"page": page})
    assert response.status_code == 200 and f"Page {expected} of 3" in response.content.decode()


def test_a_big_article_costs_one_page_not_the_whole_article(client, users, project, settings, django_assert_max_num_queries):
    settings.ARTICLE_PAGE_SENTENCES = 300
    big = Article.objects.create(project=project, title="Big")
    long_document(big, "adv", 0, 6000)
    long_document(big, "ele", 1, 5000)
    client.force_login(users["anna"])
    with django_assert_max_num_queries(12):
        html = client.get(f"/articles/{big.pk}/?page=20").content.decode()
    assert shown(html) == {"adv": list(range(5700, 6000)), "ele": []}
    assert "Page 20 of 20" in html and html.count('class="sent"') == 300


def test_an_article_without_sentences_still_renders(client, users, project):
    empty = Article.objects.create(project=project, title="Empty")
    Document.objects.create(article=empty, level="adv", rank=0)
    client.force_login(users["anna"])
    response = client.get(f"/articles/{empty.pk}/")
    assert response.status_code == 200 and "No more sentences (0 in all)" in response.content.decode()


@pytest.mark.parametrize("method,params,words", [
    ("nope", "{}", "unknown method &#x27;nope&#x27;"),
    ("jaccard", '{"partial_threshold": 3}', "partial_threshold: must be &lt;= 1, got 3"),
    ("muss-corpus", '{"k": 0}', "bad mine option(s): k: must be &gt;= 1, got 0"),
    ("jaccard", "[1]", "JSON object"),
])
def test_the_run_form_refuses_with_the_services_message_and_starts_nothing(client, users, project, method, params, words):
    """The run form's refusals are the services' DomainErrors (and the params field's JSON): a message, no run."""
    from annotation.models import AlignmentRun

    client.force_login(users["rita"])
    response = client.post(f"/projects/{project.pk}/runs/", {"method": method, "params": params}, follow=True)
    page = response.content.decode()
    assert response.status_code == 200 and "Run not started: " in page and words in page, page[-3000:]
    assert not AlignmentRun.objects.exists()
