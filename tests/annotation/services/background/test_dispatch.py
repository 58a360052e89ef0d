"""Sending work (``background/dispatch.py``): by task name, on the queue the registry or the run gives it, with
its arguments; read back from a filesystem broker in the test's folder."""
from __future__ import annotations

import base64
import json

import pytest

from annotation.models import AlignmentRun, Job
from annotation.plugins import UnknownName
from annotation.services.background import dispatch, registry
from tests.worker_process import app_broker

pytestmark = pytest.mark.django_db


@pytest.fixture
def messages(tmp_path):
    """``messages()`` → ``(queue, task, args)`` of every message on the broker so far, oldest first."""
    folder = tmp_path / "broker"
    with app_broker("filesystem://", folder):
        def read() -> list[tuple[str, str, list]]:
            out = []
            for f in sorted((folder / "out").glob("*.msg"), key=lambda f: f.stat().st_mtime_ns):
                message = json.loads(f.read_text())
                args = json.loads(base64.b64decode(message["body"]))[0]
                out.append((f.name.split(".")[-2], message["headers"]["task"], args))
            return out
        yield read


def test_a_run_goes_to_its_own_queue_gpu_unless_it_asked_for_cpu(project, messages):
    gpu = AlignmentRun.objects.create(project=project, method="sbert")
    cpu = AlignmentRun.objects.create(project=project, method="jaccard", queue="cpu")
    dispatch.send_run(gpu)
    dispatch.send_run(cpu)
    assert messages() == [("gpu", "workers.tasks.run_alignment", [gpu.pk]), ("cpu", "workers.tasks.run_alignment", [cpu.pk])]


def test_a_chunk_goes_to_the_runs_queue_or_the_one_its_executor_gives(project, messages):
    run = AlignmentRun.objects.create(project=project, method="jaccard", queue="cpu")
    dispatch.send_run_chunk(run, 3)
    dispatch.send_run_chunk(run, 4, queue="gpu")
    assert messages() == [("cpu", "workers.tasks.align_chunk", [run.pk, 3]), ("gpu", "workers.tasks.align_chunk", [run.pk, 4])]


@pytest.mark.parametrize("kind", ["corpus-stats", "export", "train-aligner", "gain-classifier"])
def test_a_job_goes_by_its_kinds_task_to_its_kinds_queue(project, messages, kind):
    job = Job.objects.create(project=project, kind=kind)
    dispatch.send_job(job)
    work = registry.job(kind)
    assert messages() == [(work.queue.value, work.task, [job.pk])]


def test_a_job_of_an_unknown_kind_is_not_sent(project, messages):
    with pytest.raises(UnknownName, match="unknown job kind .gone."):
        dispatch.send_job(Job(pk=1, project=project, kind="gone"))
    assert messages() == []
