"""A real Celery worker process runs real tasks end to end: on the embedded broker and on Redis."""
from __future__ import annotations

import pytest
from django.db import transaction

from annotation.models import Job, Status
from annotation.services.background import jobs
from tests import factories
from tests.worker_process import wait_for

pytestmark = [pytest.mark.services, pytest.mark.slow]


def _project_with_corpus():
    rita = factories.make_user("rita", researcher=True)
    project = factories.make_project("Stats", rita="researcher")
    factories.make_article(project, "Bees", {
        "adv": [["Bee populations have declined sharply across Europe.", "Researchers blame pesticides."]],
        "ele": [["There are fewer bees in Europe now."]],
    })
    return project, rita


def _run_stats_job(log) -> Job:
    project, rita = _project_with_corpus()
    with transaction.atomic():
        job = jobs.start_job(project, "corpus-stats", user=rita)
    wait_for(lambda: Job.objects.get(pk=job.pk).is_finished, 60, log, "the stats job")
    return Job.objects.get(pk=job.pk)


def test_a_stats_job_runs_through_the_embedded_broker_worker(embedded_worker):
    job = _run_stats_job(embedded_worker)
    assert job.status == Status.SUCCEEDED, job.error
    assert job.result["articles"] == 1
    assert job.result["levels"]["adv"]["sentences"] == 2
    assert job.result["levels"]["ele"]["sentences"] == 1
    assert job.attempts == 1


def test_a_stats_job_runs_through_a_redis_worker(redis_worker):
    job = _run_stats_job(redis_worker)
    assert job.status == Status.SUCCEEDED, job.error
    assert job.result["sentences"] == 3
