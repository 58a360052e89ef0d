"""Claiming work, its heartbeat, and an attempt that lost its work to another worker."""
from __future__ import annotations

import os
import socket
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import AlignmentRun, Job, Status
from annotation.services.background import progress


@pytest.fixture
def run(project) -> AlignmentRun:
    return AlignmentRun.objects.create(project=project, method="jaccard")


@pytest.fixture(autouse=True)
def _released(run):
    yield
    progress.release(AlignmentRun, run.pk)


def test_claiming_queued_work_names_the_worker_and_stamps_a_heartbeat(run):
    assert progress.claim(AlignmentRun, run.pk)
    run.refresh_from_db()
    assert run.status == Status.RUNNING and run.attempts == 1
    assert run.worker == f"{socket.gethostname()}:{os.getpid()}"
    assert timezone.now() - run.heartbeat_at < timedelta(seconds=5)


def test_a_second_delivery_while_the_worker_is_alive_does_nothing(run):
    assert progress.claim(AlignmentRun, run.pk)
    assert not progress.claim(AlignmentRun, run.pk)
    assert AlignmentRun.objects.get(pk=run.pk).attempts == 1


def test_work_whose_heartbeat_went_silent_is_taken_over(run, settings):
    AlignmentRun.objects.filter(pk=run.pk).update(
        status=Status.RUNNING, attempts=1, worker="gone:1",
        heartbeat_at=timezone.now() - timedelta(seconds=settings.WORKER_STALE_SECONDS + 1))
    assert progress.claim(AlignmentRun, run.pk)
    run.refresh_from_db()
    assert run.attempts == 2 and run.worker != "gone:1"


def test_finished_or_cancelled_work_is_never_claimed(run):
    for status in (Status.SUCCEEDED, Status.FAILED, Status.CANCELLED):
        AlignmentRun.objects.filter(pk=run.pk).update(status=status, heartbeat_at=None, started_at=None)
        assert not progress.claim(AlignmentRun, run.pk), status


def test_an_attempt_that_lost_its_work_stops_and_writes_nothing(run):
    assert progress.claim(AlignmentRun, run.pk)
    # the worker was thought lost: another one took the run over (attempt 2)
    AlignmentRun.objects.filter(pk=run.pk).update(attempts=2, worker="other:2", progress=10.0)
    with pytest.raises(progress.Superseded, match="attempt 1 lost it"):
        progress.check_cancelled(AlignmentRun, run.pk)
    assert progress.should_stop(AlignmentRun, run.pk)  # and says so again at every later check
    assert not progress.save_checkpoint(AlignmentRun, run.pk, {"done": 5}, articles_done=5)
    progress.reporter(AlignmentRun, run.pk)(0.9, "late news")
    progress.succeed(AlignmentRun, run.pk, result={"pairs": 1})
    run.refresh_from_db()
    assert (run.status, run.progress, run.articles_done, run.checkpoint, run.worker) == (
        Status.RUNNING, 10.0, 0, {}, "other:2")


def test_a_checkpoint_is_merged_and_stamps_the_heartbeat(run):
    assert progress.claim(AlignmentRun, run.pk)
    AlignmentRun.objects.filter(pk=run.pk).update(checkpoint={"lost_workers": 1}, heartbeat_at=timezone.now() - timedelta(minutes=1))
    assert progress.save_checkpoint(AlignmentRun, run.pk, {"work": "ab", "done": 8}, articles_done=8)
    run.refresh_from_db()
    assert run.checkpoint == {"lost_workers": 1, "work": "ab", "done": 8} and run.articles_done == 8
    assert timezone.now() - run.heartbeat_at < timedelta(seconds=5)


def test_a_cancelled_run_stops_its_attempt(run):
    assert progress.claim(AlignmentRun, run.pk)
    assert progress.cancel(AlignmentRun, run.pk)
    with pytest.raises(progress.Cancelled, match="was cancelled"):
        progress.check_cancelled(AlignmentRun, run.pk)


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_goes_on_during_a_long_step_and_stops_when_the_task_ends(project, settings):
    settings.WORKER_HEARTBEAT_SECONDS, settings.WORKER_STALE_SECONDS = 1, 3
    job = Job.objects.create(project=project, kind="corpus-stats")
    assert progress.claim(Job, job.pk)
    first = Job.objects.get(pk=job.pk).heartbeat_at
    time.sleep(2.5)  # one long step: no progress reported, the thread beats
    beating = Job.objects.get(pk=job.pk).heartbeat_at
    assert beating > first
    progress.release(Job, job.pk)
    time.sleep(2.5)
    assert Job.objects.get(pk=job.pk).heartbeat_at - beating < timedelta(seconds=1.5)  # at most one beat in flight


@pytest.mark.django_db(transaction=True)
def test_a_chunk_keeps_a_run_alive_without_owning_it(project, settings):
    settings.WORKER_HEARTBEAT_SECONDS, settings.WORKER_STALE_SECONDS = 1, 3
    old = timezone.now() - timedelta(minutes=5)
    run = AlignmentRun.objects.create(project=project, method="muss-corpus", status=Status.RUNNING, heartbeat_at=old)
    with progress.heartbeat(AlignmentRun, run.pk):
        time.sleep(1.5)
        assert AlignmentRun.objects.get(pk=run.pk).heartbeat_at > old
        progress.check_cancelled(AlignmentRun, run.pk)  # no claim here: nothing to lose
