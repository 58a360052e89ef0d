"""Starting background work (``background/jobs.py``): the row first, its message once the row is committed
(here on a filesystem broker in the test's folder: ``conftest.sent``), and retrying from any state but success."""
from __future__ import annotations

import pytest
from django.utils import timezone

from annotation.errors import DomainError
from annotation.models import AlignmentRun, AuditEvent, Job, Status
from annotation.services.background import jobs
from tests.annotation.services.background.test_liveness import lost_run

REFUSED = (ValueError, DomainError)  # a refused start or retry (the API answers it with a 400)


def test_a_job_is_created_and_its_message_sent_only_once_the_row_is_committed(project, sent):
    job = jobs.start_job(project, "corpus-stats", params={"x": 1})
    assert Job.objects.get(pk=job.pk).params == {"x": 1} and job.status == Status.QUEUED
    assert sent() == ["workers.tasks.corpus_stats"]
    quiet = jobs.start_job(project, "corpus-stats", enqueue=False)
    assert quiet.pk and sent() == ["workers.tasks.corpus_stats"]  # nothing more was sent


def test_an_unknown_job_kind_is_refused_before_any_row_exists(project, sent):
    with pytest.raises(REFUSED, match="unknown job kind 'nope'"):
        jobs.start_job(project, "nope")
    assert not Job.objects.exists() and sent() == []


def test_enqueue_sends_a_run_or_a_job_by_its_own_task(project, sent):
    jobs.enqueue(AlignmentRun.objects.create(project=project, method="jaccard"))
    jobs.enqueue(Job.objects.create(project=project, kind="export"))
    assert sent() == ["workers.tasks.run_alignment", "workers.tasks.export"]


# --- retry from any state but success --------------------------------------------------------

@pytest.mark.parametrize("status", [Status.FAILED, Status.CANCELLED, Status.QUEUED])
def test_a_run_is_retried_from_a_state_that_is_not_success(project, settings, sent, status):
    run = AlignmentRun.objects.create(project=project, method="jaccard", status=status, error="boom",
                                      checkpoint={"done": 8, "work": "x", "lost_workers": 2})
    run = jobs.retry_run(run)
    assert (run.status, run.error, run.checkpoint) == (Status.QUEUED, "", {"done": 8, "work": "x", "lost_workers": 0})
    assert sent() == ["workers.tasks.run_alignment"]  # a queued run's message is sent again


def test_a_running_run_is_retried_only_once_its_worker_is_lost(project, settings, sent):
    live = lost_run(project, settings, heartbeat_at=timezone.now(), worker="w:1")
    assert not jobs.can_retry(live)
    with pytest.raises(REFUSED, match="running on w:1 .*cancel it first, or wait"):
        jobs.retry_run(live)
    lost = lost_run(project, settings)
    assert jobs.can_retry(lost) and jobs.retry_run(lost).status == Status.QUEUED
    assert sent() == ["workers.tasks.run_alignment"]


def test_a_failed_job_is_retried_and_a_succeeded_one_is_not(project, users, sent):
    failed = Job.objects.create(project=project, kind="corpus-stats", status=Status.FAILED)
    assert jobs.retry_job(failed, user=users["rita"]).status == Status.QUEUED
    assert sent() == ["workers.tasks.corpus_stats"]
    assert AuditEvent.objects.get(action="job.retry").actor == users["rita"]
    done = Job.objects.create(project=project, kind="corpus-stats", status=Status.SUCCEEDED)
    with pytest.raises(REFUSED, match="succeeded; start a new one"):
        jobs.retry_job(done)


def test_a_retry_is_recorded_in_the_audit_log_with_who_asked(project, users, sent):
    run = AlignmentRun.objects.create(project=project, method="jaccard", status=Status.FAILED)
    jobs.retry_run(run, user=users["rita"])
    event = AuditEvent.objects.get(action="run.retry")
    assert (event.actor, event.target, event.details["method"]) == (users["rita"], f"run #{run.pk}", "jaccard")


def test_a_run_that_changed_meanwhile_is_not_retried_from_its_old_state(project, sent):
    run = AlignmentRun.objects.create(project=project, method="jaccard", status=Status.FAILED)
    AlignmentRun.objects.filter(pk=run.pk).update(status=Status.CANCELLED)  # someone else acted first
    with pytest.raises(REFUSED, match=f"run #{run.pk} changed meanwhile \\(now cancelled\\)"):
        jobs.retry_run(run)
    assert AlignmentRun.objects.get(pk=run.pk).status == Status.CANCELLED and sent() == []


def test_a_run_planned_into_chunks_can_be_resumed_while_its_workers_are_alive(project, settings, sent):
    chunked = lost_run(project, settings, heartbeat_at=timezone.now(), checkpoint={"chunks": 4, "lost_workers": 1})
    assert jobs.can_retry(chunked)
    resumed = jobs.retry_run(chunked)
    assert resumed.status == Status.QUEUED and resumed.checkpoint == {"chunks": 4, "lost_workers": 0}
    assert sent() == ["workers.tasks.run_alignment"]
    assert not jobs.can_retry(AlignmentRun(project=project, status=Status.SUCCEEDED, checkpoint={"chunks": 4}))


def test_a_job_of_a_kind_no_longer_registered_is_refused_with_its_code_and_left_as_it_was(project, sent):
    """A retry of a job whose extension was removed: before, its status became queued and sending its message
    raised UnknownName after the commit (a 500, and a queued job no worker would take)."""
    orphan = Job.objects.create(project=project, kind="a-removed-extension", status=Status.FAILED)
    with pytest.raises(REFUSED, match="'a-removed-extension' job, a kind this server does not know") as refused:
        jobs.retry_job(orphan)
    assert refused.value.code == "unknown_kind"
    orphan.refresh_from_db()
    assert orphan.status == Status.FAILED and sent() == []
