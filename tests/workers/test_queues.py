"""Tasks are routed to the cpu or gpu queue by name, as the registry of background work says."""
from __future__ import annotations

import pytest

from alignapp.celery import app
from annotation.services.background import registry
from workers.tasks import TASKS


@pytest.mark.parametrize("name,queue", [
    ("run_alignment", "gpu"), ("train_aligner", "gpu"), ("wivico_thresholds", "gpu"), ("gain_classifier", "gpu"),
    ("corpus_stats", "cpu"), ("access_attributes", "cpu"), ("export", "cpu"), ("import_corpus", "cpu"),
    ("paragraph_alignment", "cpu"), ("pivot_select", "cpu"), ("sum4simp_filter", "cpu"),
    ("align_chunk", "gpu"), ("reap_stale", "cpu"),
])
def test_each_task_goes_to_its_queue(name, queue):
    assert f"workers.tasks.{name}" in TASKS
    assert app.amqp.router.route({}, f"workers.tasks.{name}")["queue"].name == queue


def test_every_registry_entry_is_a_registered_task():
    assert {work.task for work in registry.every()} == set(TASKS) <= set(app.tasks)


def test_every_job_kind_has_an_idempotent_late_acked_task():
    for kind, work in registry.jobs():
        task = app.tasks[work.task]
        assert task.acks_late and task.max_retries == 3 and task.autoretry_for == registry.TRANSIENT, kind


def test_the_chunk_task_of_every_run_is_idempotent_and_late_acked():
    task = app.tasks[registry.RUN_CHUNK.task]
    assert task.acks_late and task.max_retries == 3 and task.autoretry_for == registry.TRANSIENT


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
    assert probe.conf.beat_schedule["reap-stale-work"]["task"] == registry.REAPER.task in app.tasks
    assert Reaper in app.steps["worker"]  # every worker reaps, with or without beat
