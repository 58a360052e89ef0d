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
    (tasks.mine_encode_shard, "gpu"), (tasks.mine_build_index, "cpu"), (tasks.mine_search_shard, "cpu"),
    (tasks.mine_merge, "cpu"), (tasks.mine_save_shard, "cpu"),
])
def test_each_task_goes_to_its_queue(task, queue):
    assert app.amqp.router.route({}, task.name)["queue"].name == queue


def test_every_gpu_route_names_a_real_task():
    assert set(GPU_TASKS) <= set(app.tasks)


def test_every_job_kind_has_an_idempotent_late_acked_task():
    for kind, task in tasks.JOB_TASKS.items():
        assert task.name in app.tasks, kind
        assert task.acks_late and task.max_retries == 3


def test_every_mining_chunk_task_is_idempotent_and_late_acked():
    for stage, task in tasks.MINING_TASKS.items():
        assert task.name in app.tasks, stage
        assert task.acks_late and task.max_retries == 3
