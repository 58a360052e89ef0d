"""Queries of the labelling loop compiled once per process (issue 37).

At a million pairs each queue submit→next spent more of its time building and compiling its queries
with the ORM than the database spent running them. A query here is built once with stand-ins where the
ids go (:data:`USER`, :data:`PAIR`, :data:`PROJECT`: ids no row has), compiled, and kept per process
under a key that holds everything else its SQL depends on (the caller's: e.g. the project's config and
QC settings for the queue's claim); each use replaces the stand-ins by the real ids. Only SQL is kept,
never an answer, so nothing goes stale: a changed setting is another key.
"""
from __future__ import annotations

import functools

from django.db import DEFAULT_DB_ALIAS, connection, connections

USER, PAIR, PROJECT = -7_316_054_289, -7_316_054_290, -7_316_054_291  # stand-ins: ids no row has
_COMPILED: dict[tuple, tuple] = {}
_COMPILED_MAX = 512


def compiled(key: tuple, build, *, user: int | None = None, pair: int | None = None, project: int | None = None
            ) -> tuple[str, list, object]:
    """``build()`` → (sql, params, anything else) compiled once for ``key``; the stand-ins (:data:`USER`,
    :data:`PAIR`, :data:`PROJECT`) among the parameters replaced by the ids given."""
    key = (connection.alias, connection.vendor, *key)
    hit = _COMPILED.get(key)
    if hit is None:
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.clear()
        hit = _COMPILED[key] = build()
    sql, params, extra = hit
    ids = {USER: user, PAIR: pair, PROJECT: project}
    return sql, [ids.get(p, p) if isinstance(p, int) else p for p in params], extra


def compiled_values(key: tuple, build_queryset, *, user: int | None = None, pair: int | None = None,
                    project: int | None = None) -> list[dict]:
    """The rows of the ``values_list`` queryset that ``build_queryset()`` builds with stand-ins for ids
    (:data:`USER`, :data:`PAIR`, :data:`PROJECT`), each a dict by name, its values converted as the ORM
    converts them; the SQL compiled once per process under ``key`` (which must hold everything else the
    query depends on). For a request's hot queries, whose ORM build and compilation cost more than their
    execution (issue 37)."""
    def build() -> tuple[str, list, tuple]:
        return compiled_parts(build_queryset())

    sql, params, (names, converters) = compiled(key, build, user=user, pair=pair, project=project)
    with cursor() as c:
        c.execute(sql, params)
        return converted(c.fetchall(), names, converters)


def cursor():
    """A cursor for the labelling loop's compiled statements. On PostgreSQL it binds the parameters on the
    server, and psycopg prepares a statement once it has run ``DB_PREPARE_THRESHOLD`` times on the connection
    (``alignapp/settings.py``), so PostgreSQL plans it once per connection: planning these statements cost
    2.3 ms of every label at a million pairs, 2.5× running them (issue 37). The threshold is the connection's
    only while such a statement runs (:func:`_preparing_cursor_class`); Django's other queries bind on the
    client and psycopg never counts them. Wrapped as Django wraps its own (errors, query logging); elsewhere
    Django's cursor."""
    if connection.vendor != "postgresql":
        return connection.cursor()
    connection.ensure_connection()
    with connection.wrap_database_errors:
        raw = _preparing_cursor_class()(connection.connection)
    connection.validate_thread_sharing()
    return _logged_cursor_class()(raw, connection) if connection.queries_logged else connection.make_cursor(raw)


@functools.cache
def _preparing_cursor_class() -> type:
    """A server-binding cursor that turns psycopg's prepare threshold on for its own executions only. Set on
    the connection for good, psycopg would count every query — and keep the text of each, a bulk INSERT's
    literal arrays included (an import's memory grew with its corpus, 2026-11-28)."""
    from django.conf import settings
    from django.db.backends.postgresql.base import ServerBindingCursor

    class PreparingCursor(ServerBindingCursor):
        def execute(self, query, params=None, **kwargs):
            threshold = settings.DB_PREPARE_THRESHOLD or None
            conn = self.connection
            before, conn.prepare_threshold = conn.prepare_threshold, threshold
            try:
                return super().execute(query, params, **kwargs)
            finally:
                conn.prepare_threshold = before

    return PreparingCursor


@functools.cache
def _logged_cursor_class() -> type:
    """Made on first use: the PostgreSQL backend's module is imported only on PostgreSQL."""
    from django.db.backends.postgresql.base import CursorDebugWrapper
    from django.db.backends.utils import CursorWrapper

    class LoggedCursor(CursorDebugWrapper):
        """Django's query log for a prepared statement: psycopg forgets a prepared query's text, so the log
        (``DEBUG``, the tests' query counts) gets the SQL with its parameters composed as Django's own cursor
        would log it."""

        def execute(self, sql, params=None):
            with self.debug_sql(self.db.ops.compose_sql(sql, params)):
                return CursorWrapper.execute(self, sql, params)

    return LoggedCursor


def compiled_parts(queryset) -> tuple[str, list, tuple[list[str], list]]:
    """A ``values_list`` queryset's SQL, parameters, and (names, converters) for :func:`converted`: the
    converters of each column are found once with the SQL (finding them on every use cost as much as the rest)."""
    query = queryset.query
    compiler = query.get_compiler(connection=connection)
    sql, params = compiler.as_sql()
    names = [*query.extra_select, *query.values_select, *query.annotation_select]
    converters = []
    for i, (column, _, _) in enumerate(compiler.select):
        functions = [*connection.ops.get_db_converters(column), *column.get_db_converters(connection)]
        if functions:
            converters.append((i, functions, column))
    return sql, list(params), (names, converters)


def converted(rows, names: list[str], converters: list) -> list[dict]:
    """``rows`` of a compiled ``values_list`` query (:func:`compiled_parts`), each a dict by name, its values
    converted as the ORM does."""
    db = connections[DEFAULT_DB_ALIAS]  # the connection itself: each attribute of the proxy is a look-up
    out = []
    for row in rows:
        values = list(row)
        for i, functions, column in converters:
            for convert in functions:
                values[i] = convert(values[i], column, db)
        out.append(dict(zip(names, values, strict=True)))
    return out
