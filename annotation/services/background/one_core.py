"""Background figures computed on one core of PostgreSQL (issue 37).

A big project's figures (the dashboard's, a comparison of two runs, the export preview, the score
distribution, a run's scores) are computed by jobs while people use the pages. On the 2-core bench
machine PostgreSQL's parallel workers let one of those jobs' queries take both cores, and the pages'
first requests meanwhile took 1.4–2.5 s instead of ≤ 0.2 s. A job kind registered with
``one_core=True`` runs its queries without parallel workers: the figures take a little longer to
appear, and the requests of the people waiting for them keep a core. The queue's large recounts, on a
thread of a web process, run so too (``review/queue_progress.py``).
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import DatabaseError, connection


@contextmanager
def one_core(enabled: bool = True) -> Iterator[None]:
    """Within: this connection's queries plan no parallel workers (PostgreSQL; a no-op elsewhere). A session
    setting, since a job spans several transactions; reset after (a connection that broke meanwhile is
    closed, and the next one starts with the server's default)."""
    if not enabled or connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SET max_parallel_workers_per_gather = 0")
    try:
        yield
    finally:
        try:
            with connection.cursor() as cursor:
                cursor.execute("RESET max_parallel_workers_per_gather")
        except DatabaseError:
            connection.close()
