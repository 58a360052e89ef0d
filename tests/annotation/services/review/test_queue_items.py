"""One queue item as the labelling page shows it (``review.queue_items``): the pair's sentences and groups,
the word diff, blind unless revealed, and the context around each side."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, Status
from annotation.services.alignment.run_saving import link_sentences
from annotation.services.review import queue_items
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair(project):
    article = factories.make_article(project, "Bees", {
        "adv": [["S0.", "S1.", "S2."], ["S3.", "S4.", "S5.", "S6.", "S7."]],
        "ele": [["Bees die fast.", "They die."]]})
    c, s = article.documents.order_by("rank")
    run = AlignmentRun.objects.create(project=project, method="jaccard", status=Status.SUCCEEDED)
    made = factories.make_pair(run, article=article, complex_document=c, simple_document=s, complex_key="3,4,7",
                               simple_key="0", score=0.8, predicted_label="partial")
    link_sentences([made])
    return made


def test_runs_of_consecutive_indices_are_the_groups():
    assert queue_items.groups([7, 3, 4]) == [[3, 4], [7]] and queue_items.groups([]) == []


def test_the_item_shows_both_sides_its_shape_and_the_diff_but_no_prediction_when_blind(project, pair):
    item = queue_items.item_payload(pair, project)
    assert item["complex"]["indices"] == [3, 4, 7] and item["complex"]["groups"] == [[3, 4], [7]]
    assert [s["text"] for s in item["simple"]["sentences"]] == ["Bees die fast."]
    assert item["shape"] == "3:1" and "diff" in item
    assert "prediction" not in item and "why" not in item


def test_a_researcher_sees_the_prediction_and_why_it_was_served(project, pair):
    item = queue_items.item_payload(pair, project, reveal=True)
    assert item["prediction"] == {"score": 0.8, "label": "partial"}
    assert item["why"]["order"] == "corpus" and item["why"]["predictions"][0]["method"] == "jaccard"


def test_the_context_is_the_pairs_paragraphs_and_two_neighbours_each_way(project, pair):
    around = queue_items.item_payload(pair, project, with_context=True)["context"]
    assert [s["index"] for s in around["complex"]] == [1, 2, 3, 4, 5, 6, 7]  # paragraph 2, and S1, S2 before
    assert [s["index"] for s in around["complex"] if s["in_pair"]] == [3, 4, 7]
    assert [s["index"] for s in around["simple"]] == [0, 1]


def _claimed(pair):
    """The pair as the queue's claim returns it: only its id loaded."""
    from django.db import connection

    from annotation.models import CandidatePair

    return CandidatePair.from_db(connection.alias, ["id"], [pair.pk])


def test_a_claimed_pairs_item_is_one_compiled_query_equal_to_the_general_path(project, pair,
                                                                              django_assert_num_queries):
    """Issue 37: the labelling loop's item (a claimed pair, blind, no context) is read in one query compiled once
    per process, and says exactly what the general path (the ORM, the pair loaded) says."""
    from annotation.models import CandidatePair

    general = queue_items.item_payload(CandidatePair.objects.select_related("article").get(pk=pair.pk), project)
    queue_items.item_payload(_claimed(pair), project)  # compiled here
    with django_assert_num_queries(1):
        fast = queue_items.item_payload(_claimed(pair), project)
    assert fast == general and fast["shape"] == "3:1"
    from annotation.services.review.queue_compiled import _COMPILED

    assert any(key[2:] == ("item",) for key in _COMPILED)  # compiled once, not built with the ORM each time


def test_a_claimed_pair_shown_with_predictions_or_context_takes_the_general_path(project, pair):
    project.config = {**(project.config or {}), "show_predictions": True}
    item = queue_items.item_payload(_claimed(pair), project)
    assert item["prediction"] == {"score": 0.8, "label": "partial"}
    assert "context" in queue_items.item_payload(_claimed(pair), project, with_context=True)


def test_a_claimed_pair_with_an_empty_side_still_shows_its_document(project, pair):
    """A side without sentences (the fast query has no row for it) falls back to the general path."""
    from annotation.models import PairSentence, Side

    PairSentence.objects.filter(pair=pair, side=Side.SIMPLE).delete()
    item = queue_items.item_payload(_claimed(pair), project)
    assert item["simple"] == {"document": pair.simple_document_id, "level": "ele", "indices": [], "groups": [],
                              "sentences": []} and item["shape"] == "3:0"
