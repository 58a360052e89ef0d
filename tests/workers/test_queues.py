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


def test_redis_redelivers_after_a_few_chunk_lengths_and_lost_workers_are_reaped(settings):
    from celery import Celery

    from alignapp.celery import Reaper, _configure

    settings.CELERY_BROKER_URL = "redis://127.0.0.1:6379/9"
    probe = Celery("probe")
    _configure(probe)
    assert probe.conf.broker_transport_options == {"visibility_timeout": settings.CELERY_VISIBILITY_TIMEOUT}
    assert settings.CELERY_VISIBILITY_TIMEOUT <= 3600 < settings.CELERY_TASK_TIME_LIMIT  # not the longest job
    assert probe.conf.task_acks_late and probe.conf.task_reject_on_worker_lost
    assert not probe.conf.worker_cancel_long_running_tasks_on_connection_loss
    assert probe.conf.beat_schedule["reap-stale-work"]["task"] == tasks.reap_stale.name in app.tasks
    assert Reaper in app.steps["worker"]  # every worker reaps, with or without beat
