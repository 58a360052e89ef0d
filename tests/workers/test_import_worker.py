"""A large upload's ``import`` job runs in a real worker (cpu queue): on the embedded broker and on Redis."""
from __future__ import annotations

import json

import pytest

from annotation.models import Job, Status
from annotation.services.corpus.importing import ImportRequest, uploads
from tests import factories
from tests.worker_process import wait_for

pytestmark = [pytest.mark.services, pytest.mark.slow]


class MemoryUpload:
    """An uploaded file as Django hands it over when it kept it in memory."""

    def __init__(self, name: str, data: bytes) -> None:
        self.name, self.data = name, data

    def chunks(self):
        yield self.data


def _run_import_job(log) -> tuple[Job, object]:
    rita = factories.make_user("rita", researcher=True)
    project = factories.make_project("Imports", rita="researcher")
    data = "".join(json.dumps({"id": f"a{i}", "complex": {"paragraphs": [[f"Complex {i}.", "More."]]},
                               "simple": {"paragraphs": [[f"Simple {i}."]]}, "gold": [[0, 0]]}) + "\n"
                   for i in range(300)).encode()
    staged = uploads.stage_uploads([MemoryUpload("corpus.jsonl", data)])
    job = uploads.start_import_job(project, staged, ImportRequest(), user=rita)  # queued once its row is committed
    wait_for(lambda: Job.objects.get(pk=job.pk).is_finished, 120, log, "the import job")
    return Job.objects.get(pk=job.pk), staged


def _check(job, staged) -> None:
    assert job.status == Status.SUCCEEDED, job.error
    assert (job.result["articles"], job.result["sentences"], job.result["pairs"]) == (300, 900, 300)
    assert job.project.articles.count() == 300
    assert not staged.folder.exists()


def test_an_import_job_runs_in_an_embedded_broker_worker(embedded_worker):
    _check(*_run_import_job(embedded_worker))


def test_an_import_job_runs_in_a_redis_worker(redis_worker):
    _check(*_run_import_job(redis_worker))
