"""A pairs list page reads its pairs' texts and predictions as rows (issue 37): the same answer as a
pair's own page (prefetched objects), in a number of queries that does not grow with the page."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from annotation.models import AlignmentRun, PairSentence, Side, Status
from annotation.models.alignment import indices_key
from tests import factories

pytestmark = pytest.mark.backend


def pairs_of_two_runs(project, n: int) -> list:
    first = AlignmentRun.objects.create(project=project, method="jaccard", status=Status.SUCCEEDED)
    second = AlignmentRun.objects.create(project=project, method="tfidf", status=Status.SUCCEEDED)
    pairs = []
    for k in range(n):
        article = factories.make_article(project, f"Rows {k}", {
            "adv": [[f"First complex {k}.", f"Second complex {k}."]], "ele": [[f"Simple {k}."]]})
        c, s = article.documents.order_by("rank")
        pair = factories.make_pair(first, article=article, complex_document=c, simple_document=s,
                                   complex_key=indices_key([1, 0]), simple_key=indices_key([0]),
                                   predicted_label="aligned", score=0.4)
        pairs.append(factories.make_pair(second, article=article, complex_document=c, simple_document=s,
                                         complex_key=pair.complex_key, simple_key=pair.simple_key,
                                         predicted_label="partial", score=0.7 + k / 100))
        members = [(sentence, Side.COMPLEX) for sentence in reversed(c.sentences.order_by("index"))]
        PairSentence.objects.bulk_create([PairSentence(pair=pair, sentence=sentence, side=side) for sentence, side
                                          in members + [(s.sentences.get(), Side.SIMPLE)]])
    return pairs


def test_a_list_page_shows_what_each_pairs_own_page_shows(users, project):
    pairs = pairs_of_two_runs(project, 3)
    client = APIClient()
    client.force_authenticate(users["rita"])
    listed = client.get(f"/api/pairs/?project={project.pk}").json()["results"]
    assert [row["id"] for row in listed] == [p.pk for p in pairs]
    for row in listed:
        assert row == client.get(f"/api/pairs/{row['id']}/").json()
    assert listed[0]["complex_text"] == "First complex 0. Second complex 0." and listed[0]["simple_text"] == "Simple 0."
    assert [(p["method"], p["label"]) for p in listed[0]["predictions"]] == [("jaccard", "aligned"), ("tfidf", "partial")]


def test_a_page_of_seven_pairs_takes_as_many_queries_as_a_page_of_two(users, project):
    pairs_of_two_runs(project, 7)
    client = APIClient()
    client.force_authenticate(users["rita"])
    counts = []
    for size in (2, 7):
        with CaptureQueriesContext(connection) as queries:
            assert len(client.get(f"/api/pairs/?project={project.pk}&page_size={size}").json()["results"]) == size
        counts.append(len(queries))
    assert counts[0] == counts[1]
