"""Keyset pagination of the list APIs (issue 37, item 2): the last page costs what the first does (no
OFFSET, no COUNT after the first page), every row comes once, ties included, and ``previous`` goes back."""
from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import AlignmentRun, CandidatePair, Document, Label, Prediction, Status
from annotation.models.alignment import indices_key
from annotation.pagination import KeysetPagination, keyset_fields
from tests import factories

pytestmark = pytest.mark.backend

SEVEN = 7


def seven_pairs(project, annotator=None, title: str = "Article") -> list[CandidatePair]:
    run = AlignmentRun.objects.create(project=project, method="jaccard", status=Status.SUCCEEDED)
    pairs = []
    for n in range(SEVEN):
        article = factories.make_article(project, f"{title} {n}", {"adv": [[f"Complex {n}."]], "ele": [[f"Simple {n}."]]})
        c, s = article.documents.order_by("rank")
        pairs.append(factories.make_pair(run, article=article, complex_document=c, simple_document=s,
                                         complex_key=indices_key([0]), simple_key=indices_key([0]),
                                         predicted_label="aligned", score=n / 10))
    if annotator is not None:
        Label.objects.bulk_create([Label(pair=p, annotator=annotator, value="aligned") for p in pairs])
    return pairs


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def walk(client: APIClient, url: str) -> tuple[list[dict], list[list[str]]]:
    """Every page of ``url`` following ``next``: the pages' JSON and each page's SQL."""
    pages, sql = [], []
    while url:
        with CaptureQueriesContext(connection) as queries:
            page = client.get(url).json()
        pages.append(page)
        sql.append([q["sql"] for q in queries.captured_queries])
        url = page["next"]
    return pages, sql


def shape(statement: str) -> str:
    """A statement without its literal values (the cursor's key and the ids of the prefetches differ)."""
    return re.sub(r"\d+(\.\d+)?|'[^']*'", "?", re.sub(r"IN \([^)]*\)", "IN (?)", statement))


@pytest.fixture
def three_a_page(monkeypatch):
    monkeypatch.setattr(KeysetPagination, "page_size", 3)


def test_the_pairs_list_issues_the_same_queries_on_its_last_page_as_on_its_second(users, project, three_a_page):
    pairs = seven_pairs(project)
    pages, sql = walk(api(users["rita"]), f"/api/pairs/?project={project.pk}")
    assert [p["id"] for page in pages for p in page["results"]] == [p.pk for p in pairs]
    assert [page["count"] for page in pages] == [SEVEN] * 3
    assert any("COUNT(" in q for q in sql[0]), "the first page counts the listing, once"
    for later in sql[1:]:
        assert not any("COUNT(" in q or "OFFSET" in q for q in later), later
    assert [shape(q) for q in sql[2]] == [shape(q) for q in sql[1]]


def test_rows_with_the_same_sort_key_come_once_each_and_previous_goes_back(users, project, three_a_page):
    """"My labels" is ordered by ``-updated_at, -id``: seven labels given at the same instant."""
    seven_pairs(project, annotator=users["anna"])
    Label.objects.update(updated_at=timezone.now())
    client = api(users["anna"])
    pages, _ = walk(client, f"/api/labels/?mine=1&project={project.pk}")
    ids = [row["id"] for page in pages for row in page["results"]]
    assert ids == sorted(Label.objects.values_list("id", flat=True), reverse=True)
    assert pages[0]["previous"] is None and pages[-1]["next"] is None
    back = client.get(pages[2]["previous"]).json()
    assert [row["id"] for row in back["results"]] == [row["id"] for row in pages[1]["results"]]
    first = client.get(back["previous"]).json()
    assert [row["id"] for row in first["results"]] == [row["id"] for row in pages[0]["results"]]
    assert first["previous"] is None


def test_a_pair_added_after_the_first_page_is_listed_and_the_count_stays_the_first_pages(users, project, three_a_page):
    pairs = seven_pairs(project)
    client = api(users["rita"])
    first = client.get(f"/api/pairs/?project={project.pk}").json()
    CandidatePair.objects.filter(pk=pairs[-1].pk).delete()
    extra = seven_pairs(project, title="Later")[0]
    pages, _ = walk(client, first["next"])
    listed = [p["id"] for p in first["results"]] + [p["id"] for page in pages for p in page["results"]]
    assert listed == [p.pk for p in pairs[:-1]] + [p.pk for p in CandidatePair.objects.filter(pk__gte=extra.pk)]
    assert {page["count"] for page in pages} == {SEVEN}


def test_an_ordering_by_score_pages_by_offset_without_counting_again(users, project, three_a_page):
    pairs = seven_pairs(project)
    pages, sql = walk(api(users["rita"]), f"/api/pairs/?project={project.pk}&ordering=-score")
    assert [p["id"] for page in pages for p in page["results"]] == [p.pk for p in reversed(pairs)]
    assert not any("COUNT(" in q for later in sql[1:] for q in later)


def test_the_documents_list_pages_by_article_rank_and_id(users, project, three_a_page):
    seven_pairs(project)
    pages, sql = walk(api(users["rita"]), "/api/documents/?page_size=4")
    listed = [(d["article"], d["id"]) for page in pages for d in page["results"]]
    assert len(listed) == 2 * SEVEN + Document.objects.exclude(article__title__startswith="Article").count()
    assert listed == sorted(listed) and not any("OFFSET" in q for later in sql[1:] for q in later)


def test_page_size_and_the_old_page_numbers_are_still_answered(users, project, three_a_page):
    pairs = seven_pairs(project)
    client = api(users["rita"])
    page = client.get(f"/api/pairs/?project={project.pk}&page_size=5").json()
    assert [p["id"] for p in page["results"]] == [p.pk for p in pairs[:5]]
    second = client.get(f"/api/pairs/?project={project.pk}&page=2").json()
    assert [p["id"] for p in second["results"]] == [p.pk for p in pairs[3:6]] and second["count"] == SEVEN
    assert [p["id"] for p in client.get(second["next"]).json()["results"]] == [pairs[6].pk]
    assert client.get(f"/api/pairs/?project={project.pk}&page=4").status_code == 404


@pytest.mark.parametrize("url", ["/api/pairs/?project={p}&page=9999999999999999999999999",
                                 "/api/documents/?page=9999999999999999999999999&page_size=1000"])
def test_a_page_number_past_what_a_bigint_holds_is_a_404_not_a_500(users, project, url):
    """Found by the API fuzz test: the page's OFFSET overflowed PostgreSQL's bigint (a DataError, a 500)."""
    seven_pairs(project)
    assert api(users["rita"]).get(url.format(p=project.pk)).status_code == 404


def test_a_forged_offset_cursor_reads_past_the_end_not_past_a_bigint(users, project, three_a_page):
    import base64
    import json

    seven_pairs(project)
    forged = base64.urlsafe_b64encode(json.dumps({"n": 7, "o": 10 ** 30}).encode()).decode().rstrip("=")
    answer = api(users["rita"]).get(f"/api/pairs/?project={project.pk}&ordering=-score&cursor={forged}")
    assert answer.status_code == 200 and answer.json()["results"] == []


@pytest.mark.parametrize("cursor", ["%%%", "bm90IGpzb24", "eyJrIjogWzEsIDJdfQ"])
def test_a_made_up_cursor_is_a_404_not_a_500(users, project, cursor):
    seven_pairs(project)
    assert api(users["rita"]).get(f"/api/pairs/?project={project.pk}&cursor={cursor}").status_code == 404


def test_only_orderings_of_non_null_columns_ending_in_the_key_are_keyset():
    assert keyset_fields(Label.objects.order_by("-updated_at", "-id")) == [("updated_at", True), ("id", True)]
    assert keyset_fields(CandidatePair.objects.order_by("pk")) == [("id", False)]
    assert keyset_fields(CandidatePair.objects.order_by("score", "id")) is None  # nullable
    assert keyset_fields(CandidatePair.objects.order_by("article__title", "id")) is None
    assert keyset_fields(Label.objects.order_by("-updated_at")) is None  # not unique
    assert keyset_fields(Document.objects.order_by("article_id", "rank", "id")) == [
        ("article_id", False), ("rank", False), ("id", False)]
    assert keyset_fields(Document.objects.order_by("article", "id")) is None  # the related model's ordering


def test_a_runs_pairs_list_takes_its_total_from_the_run_without_counting(users, project, three_a_page):
    pairs = seven_pairs(project)
    run = AlignmentRun.objects.get(predictions__pair=pairs[0])
    run.pair_count = Prediction.objects.filter(run=run).count()  # what a finished run stores
    run.save(update_fields=["pair_count"])
    seven_pairs(project, title="Other run")  # pairs of another run: not in the count
    client = api(users["rita"])
    url = f"/api/pairs/?project={project.pk}&run={run.pk}"
    pages, sql = walk(client, url)
    listed = [p["id"] for page in pages for p in page["results"]]
    assert listed == [p.pk for p in pairs]
    assert [page["count"] for page in pages] == [len(listed)] * 3 == [CandidatePair.objects.filter(
        predictions__run=run).count()] * 3
    assert not any("COUNT(" in q for page in sql for q in page), "the run's stored total, no COUNT(*)"
    # narrowed by another filter, or a run still writing: counted as before
    narrowed, narrowed_sql = walk(client, url + "&label=aligned")
    assert narrowed[0]["count"] == SEVEN and any("COUNT(" in q for q in narrowed_sql[0])
    AlignmentRun.objects.filter(pk=run.pk).update(status=Status.RUNNING, pair_count=2)
    running, running_sql = walk(client, url)
    assert running[0]["count"] == SEVEN and any("COUNT(" in q for q in running_sql[0])
