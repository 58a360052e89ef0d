"""Tasks are routed to the cpu or gpu queue by name."""
from __future__ import annotations

import pytest

from alignapp.celery import app
from workers import tasks
from workers.queues import GPU_TASKS


@pytest.mark.parametrize("task,queue", [
    (tasks.run_alignment, "gpu"), (tasks.wivico_thresholds, "gpu"), (tasks.gain_classifier, "gpu"),
    (tasks.corpus_stats, "cpu"), (tasks.access_attributes, "cpu"), (tasks.export, "cpu"),
    (tasks.paragraph_alignment, "cpu"), (tasks.pivot_select, "cpu"), (tasks.sum4simp_filter, "cpu"),
])
def test_each_task_goes_to_its_queue(task, queue):
    assert app.amqp.router.route({}, task.name)["queue"].name == queue


def test_every_gpu_route_names_a_real_task():
    assert set(GPU_TASKS) <= set(app.tasks)


def test_every_job_kind_has_an_idempotent_late_acked_task():
    for kind, task in tasks.JOB_TASKS.items():
        assert task.name in app.tasks, kind
        assert task.acks_late and task.max_retries == 3
