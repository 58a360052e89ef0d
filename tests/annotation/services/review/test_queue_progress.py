"""The queue's progress counts (``queue_progress``): cached, and recounted by one request at a time."""
from __future__ import annotations

import threading

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Membership
from annotation.services.review import queue_progress
from tests import labels
from tests.annotation.services.review.test_queue import build_queue, set_qc


def test_while_one_request_recounts_the_others_answer_with_the_last_count(project, users):
    """Issue 37: at a million pairs a count takes about half a second, and every request that found it
    expired counted it again at the same moment."""
    set_qc(project)
    build_queue(project, 3)
    excluded, key = Membership.objects.excluded(project), queue_progress._taken_key(project)
    assert queue_progress._taken(project, excluded) == 0
    labels.next_item(users["anna"], project)  # one place taken
    cache.delete(key)  # expired
    assert cache.add(f"{key}:counting", 1), "no recount under way"
    with CaptureQueriesContext(connection) as queries:  # another request is recounting
        assert queue_progress._taken(project, excluded) == 0, "the last count"
    assert not queries.captured_queries
    cache.delete(f"{key}:counting")  # that recount ended without storing (its process died)
    with CaptureQueriesContext(connection) as queries:
        assert queue_progress._taken(project, excluded) == 1, "counted again"
    assert len(queries.captured_queries) == 1
    assert cache.get(f"{key}:counting") is None, "the turn is given back"


@pytest.mark.django_db(transaction=True)  # the recount's thread has its own connection: it sees committed rows
def test_a_large_count_is_recounted_on_a_thread_while_the_request_answers_with_the_last(project, users, monkeypatch):
    """Issue 37: at a million pairs the request that found the count expired counted it itself, and PostgreSQL's
    parallel workers took both cores for half a second: 200 annotators' submits waited 0.1–0.7 s behind it. A count
    of ``BACKGROUND_FROM`` or more is now recounted on a thread; the request (and every other) answers at once."""
    monkeypatch.setattr(queue_progress, "BACKGROUND_FROM", 0)  # every count is "large" (no test builds a million)
    set_qc(project)
    build_queue(project, 3)
    excluded, key = Membership.objects.excluded(project), queue_progress._taken_key(project)
    assert queue_progress._taken(project, excluded) == 0, "no last count yet: counted in the request"
    labels.next_item(users["anna"], project)  # one place taken
    cache.delete(key)  # expired
    with CaptureQueriesContext(connection) as queries:
        assert queue_progress._taken(project, excluded) == 0, "the last count, at once"
    assert not queries.captured_queries, "nothing counted in the request"
    recounts = [t for t in threading.enumerate() if t.name == "queue-recount"]
    assert len(recounts) == 1
    recounts[0].join(timeout=30)
    assert cache.get(key) == 1 and cache.get(f"{key}:last") == 1, "recounted on the thread"
    assert cache.get(f"{key}:counting") is None, "the turn is given back"
    assert queue_progress._taken(project, excluded) == 1
