"""A big project's figure jobs run without PostgreSQL's parallel workers (``background/one_core.py``, issue 37):
on the 2-core machine one job's parallel query took both cores and the pages' first requests took 1.4–2.5 s."""
from __future__ import annotations

import pytest
from django.db import connection

from annotation.services.background import registry
from annotation.services.background.one_core import one_core
from workers import tasks

pytestmark = pytest.mark.django_db

SEEN: list[str] = []
FIGURES = ("dashboard-figures", "run-comparison", "export-preview", "score-distribution", "run-scores")


def parallel_workers() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW max_parallel_workers_per_gather")
        return cursor.fetchone()[0]


def record(pk: int) -> None:
    """A service for the task body below: what the job's own connection allows."""
    SEEN.append(parallel_workers())


@pytest.mark.skipif("connection.vendor != 'postgresql'")
@pytest.mark.parametrize("flag", [True, False])
def test_a_job_of_a_one_core_kind_runs_without_parallel_workers_and_the_connection_is_reset(flag):
    default = parallel_workers()
    assert default != "0", "the server's default plans parallel workers"
    work = registry.Work("workers.tasks.test_one_core", f"{__name__}.record", registry.Queue.CPU, "test", one_core=flag)
    SEEN.clear()
    tasks._released(work, "Job")(-1)  # no such job: only the body runs (release updates nothing)
    assert SEEN == (["0"] if flag else [default])
    assert parallel_workers() == default, "the connection's next work plans as before"


def test_one_core_is_a_no_op_when_off_or_off_postgresql():
    with one_core(False):
        pass
    with one_core():
        assert connection.vendor != "postgresql" or parallel_workers() == "0"


def test_the_big_projects_figure_jobs_are_one_core_and_the_rest_are_not():
    kinds = dict(registry.jobs())
    assert {"export", "import"} <= set(kinds)
    assert {name for name, work in kinds.items() if work.one_core} == set(FIGURES)
