"""Every list of the client goes through every page and stops after the last (issue 28, item 1)."""
from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from alignapp_client import Client, Run, Unavailable

from annotation.models import AlignmentRun, Job, Label, Status
from annotation.models.alignment import indices_key
from annotation.pagination import KeysetPagination
from tests import factories
from tests.client.conftest import Counting

SEVEN = 7  # three pages of three


@pytest.fixture
def pages_of_three(monkeypatch):
    """The API lists three items a page. DRF's paginator reads its ``page_size`` attribute, set from
    ``REST_FRAMEWORK["PAGE_SIZE"]`` when DRF is imported, so overriding the setting would not reach it."""
    monkeypatch.setattr(KeysetPagination, "page_size", 3)


def a_project_with_seven_of_everything(user):
    project = factories.make_project("Paged", rita="researcher")
    run = AlignmentRun.objects.create(project=project, method="jaccard", status=Status.SUCCEEDED)
    pairs = []
    for n in range(SEVEN):
        article = factories.make_article(project, f"Article {n}", {"adv": [[f"Complex {n}."]], "ele": [[f"Simple {n}."]]})
        c, s = article.documents.order_by("rank")
        pairs.append(factories.make_pair(run, article=article, complex_document=c, simple_document=s,
                                         complex_key=indices_key([0]), simple_key=indices_key([0]),
                                         predicted_label="aligned", score=0.9))
        Label.objects.create(pair=pairs[-1], annotator=user, value="aligned")
    for _ in range(SEVEN - 1):
        AlignmentRun.objects.create(project=project, method="tfidf", status=Status.SUCCEEDED)
    for _ in range(SEVEN):
        Job.objects.create(project=project, kind="import", status=Status.SUCCEEDED)
    for n in range(SEVEN - 1):
        factories.make_project(f"Other {n}", rita="annotator")
    return project, run, pairs


def test_every_list_goes_through_all_pages_and_stops(live_server, researcher, pages_of_three):
    user, token = researcher
    project_row, run_row, pairs = a_project_with_seven_of_everything(user)
    transport = Counting()
    client = Client(live_server.url, token, transport=transport)
    project = client.project(project_row.pk)
    pair_ids = [p.pk for p in pairs]

    assert len({p.id for p in client.projects()}) == SEVEN
    assert [p["id"] for p in project.pairs()] == pair_ids
    assert sorted(label["pair"] for label in project.labels()) == pair_ids
    assert [a["id"] for a in project.articles()] == [p.article_id for p in pairs]
    assert len({r.id for r in project.runs}) == SEVEN
    assert len({j.id for j in project.jobs}) == SEVEN
    assert [p["id"] for p in client.run(run_row.pk).pairs()] == pair_ids
    assert len({r.id for r in client.runs()}) == len({j.id for j in client.jobs()}) == SEVEN
    assert len(transport.requests) == 2 + 9 * 3, transport.requests  # the project, the run, three pages a list


def test_lists_are_iterators_that_fetch_a_page_when_needed(live_server, researcher, pages_of_three):
    user, token = researcher
    project, _, pairs = a_project_with_seven_of_everything(user)
    transport = Counting()
    items = Client(live_server.url, token, transport=transport).pairs(project.pk)
    assert isinstance(items, Iterator) and transport.requests == []
    assert [next(items)["id"] for _ in range(3)] == [p.pk for p in pairs[:3]] and len(transport.requests) == 1
    assert next(items)["id"] == pairs[3].pk and len(transport.requests) == 2
    assert "cursor=" in transport.requests[-1]


class FailingOnce(Counting):
    """Refuses the first request for a cursor page (the server gone for a moment)."""

    def __init__(self) -> None:
        super().__init__()
        self.failed = False

    def handle_request(self, request):
        if "cursor=" in str(request.url) and not self.failed:
            self.failed = True
            self.requests.append(f"REFUSED {request.url}")
            raise httpx.ConnectError("connection refused", request=request)
        return super().handle_request(request)


def test_a_list_has_a_length_a_page_size_and_resumes_after_an_error(live_server, researcher, pages_of_three):
    """Issue 37 (4): ``len()`` without reading every page, ``page_size`` sent, and after a failed page the
    same iterator goes on from where it stopped (no item twice, none lost)."""
    user, token = researcher
    project, _, pairs = a_project_with_seven_of_everything(user)
    transport = FailingOnce()
    client = Client(live_server.url, token, transport=transport, retries=0)
    items = client.pairs(project.pk)
    assert len(items) == items.count == SEVEN and len(transport.requests) == 1  # the first page only
    got = [next(items)["id"] for _ in range(3)]
    with pytest.raises(Unavailable):
        next(items)
    got += [p["id"] for p in items]  # the same iterator, resumed
    assert got == [p.pk for p in pairs] and transport.failed
    big = Client(live_server.url, token, transport=(counted := Counting()))
    assert [p["id"] for p in big.pairs(project.pk, page_size=5)] == [p.pk for p in pairs]
    assert len(counted.requests) == 2 and "page_size=5" in counted.requests[0]
    assert len(client.runs(project.pk)) == SEVEN and isinstance(next(iter(client.runs(project.pk))), Run)


def test_a_list_read_ahead_gives_the_same_items_and_resumes_after_a_failed_page(live_server, researcher, pages_of_three):
    """Issue 37: with ``read_ahead`` (on from 1000 a page) the next page is asked for while this one is read;
    the items are the same, each page asked for once, and a page that failed in the background is raised when
    the loop reaches it and asked for again by the next ``next()`` (no item twice, none lost)."""
    user, token = researcher
    project, _, pairs = a_project_with_seven_of_everything(user)
    counted = Counting()
    items = Client(live_server.url, token, transport=counted).pairs(project.pk, read_ahead=True)
    assert items.read_ahead and [p["id"] for p in items] == [p.pk for p in pairs]
    assert len(counted.requests) == 3 and len(set(counted.requests)) == 3  # three pages, each once
    transport = FailingOnce()
    items = Client(live_server.url, token, transport=transport, retries=0).pairs(project.pk, read_ahead=True)
    got = [next(items)["id"] for _ in range(3)]
    with pytest.raises(Unavailable):
        next(items)  # the second page, read ahead, was refused
    got += [p["id"] for p in items]
    assert got == [p.pk for p in pairs] and transport.failed
    assert not Client(live_server.url, token).pairs(project.pk, page_size=999).read_ahead
    assert Client(live_server.url, token).pairs(project.pk, page_size=1000).read_ahead
