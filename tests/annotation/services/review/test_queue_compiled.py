"""Queries compiled once per process (``review.queue_compiled``, issue 37): the SQL is kept, never an
answer; the stand-ins become the ids of each use, and values come back converted as the ORM converts them."""
from __future__ import annotations

import pytest
from django.db.models import F

from annotation.models import Membership, Project
from annotation.services.review import queue_compiled
from annotation.services.review.queue_compiled import PROJECT, USER, compiled_values

pytestmark = pytest.mark.django_db


def test_a_query_is_built_once_and_answers_for_each_use_with_its_own_ids(project, users):
    builds = []

    def build():
        builds.append(1)
        return (Membership.objects.filter(project_id=PROJECT, user_id=USER)
                .annotate(created=F("project__created_at"), config=F("project__config")).values_list("role", "created", "config"))

    key = ("test-membership", id(test_a_query_is_built_once_and_answers_for_each_use_with_its_own_ids))
    anna = compiled_values(key, build, user=users["anna"].pk, project=project.pk)
    rita = compiled_values(key, build, user=users["rita"].pk, project=project.pk)
    olga = compiled_values(key, build, user=users["olga"].pk, project=project.pk)
    assert len(builds) == 1, "compiled once, used three times"
    assert [row["role"] for row in anna + rita] == ["annotator", "researcher"] and olga == []
    assert anna[0]["created"] == project.created_at and anna[0]["created"].tzinfo is not None  # converted
    assert anna[0]["config"] == Project.objects.get(pk=project.pk).config  # JSON, as the ORM reads it


def test_fresh_data_every_use_and_a_bounded_store(project, users, monkeypatch):
    def build():
        return Membership.objects.filter(project_id=PROJECT, user_id=USER).values_list("role")

    key = ("test-fresh",)
    assert compiled_values(key, build, user=users["anna"].pk, project=project.pk) == [{"role": "annotator"}]
    Membership.objects.filter(project=project, user=users["anna"]).update(role="researcher")
    assert compiled_values(key, build, user=users["anna"].pk, project=project.pk) == [{"role": "researcher"}]
    monkeypatch.setattr(queue_compiled, "_COMPILED_MAX", 1)
    compiled_values(("test-other",), build, user=users["anna"].pk, project=project.pk)
    assert len(queue_compiled._COMPILED) == 1, "a full store starts again rather than grow"


def test_the_loops_statements_are_prepared_on_postgresql_and_logged_with_their_values(project, users, settings):
    """Issue 37: planning the labelling loop's statements cost more than running them, so on PostgreSQL they bind
    on the server and psycopg prepares each once it ran ``prepare_threshold`` times on the connection; the query
    log (DEBUG, the tests' counts) still holds each statement with its values. Elsewhere: Django's cursor."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    sql = "SELECT role FROM annotation_membership WHERE project_id = %s AND user_id = %s"
    connection.ensure_connection()
    settings.DB_PREPARE_THRESHOLD = 2
    with CaptureQueriesContext(connection) as queries:
        for name in ("anna", "rita", "anna", "rita"):
            with queue_compiled.cursor() as cursor:
                cursor.execute(sql, [project.pk, users[name].pk])
                assert cursor.fetchone()[0] == ("annotator" if name == "anna" else "researcher")
    logged = [q["sql"] for q in queries.captured_queries]
    assert logged[2] == sql % (project.pk, users["anna"].pk) and len(logged) == 4
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
                       ["SELECT role FROM annotation_membership WHERE project_id = $1%"])
        assert cursor.fetchone()[0] == 1, "prepared once, on this connection"
        assert connection.connection.prepare_threshold is None, "the connection's other queries are never counted"
        for _ in range(3):
            cursor.execute("SELECT role FROM annotation_membership WHERE user_id = %s", [users["anna"].pk])
        cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
                       ["SELECT role FROM annotation_membership WHERE user_id%"])
        assert cursor.fetchone()[0] == 0, "Django's own queries are not prepared"
