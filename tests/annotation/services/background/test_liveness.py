"""Work whose worker was lost is re-queued (its message really sent, here on a filesystem broker in
the test's folder: ``conftest.sent``) or failed after MAX_ATTEMPTS losses. Retrying by hand is
``background/jobs.py``'s (``test_jobs.py``)."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import AlignmentRun, AuditEvent, Job, Status
from annotation.services.background import liveness
from tests.worker_process import app_broker


def silent_for(seconds: float):
    return timezone.now() - timedelta(seconds=seconds)


def lost_run(project, settings, **fields) -> AlignmentRun:
    fields = {"method": "jaccard", "status": Status.RUNNING, "attempts": 1, "worker": "gone:7",
              "heartbeat_at": silent_for(settings.WORKER_STALE_SECONDS + 5), **fields}
    return AlignmentRun.objects.create(project=project, **fields)


def test_a_run_whose_worker_went_silent_is_requeued_once(project, settings, sent):
    run = lost_run(project, settings, checkpoint={"work": "abc", "done": 16})
    live = lost_run(project, settings, heartbeat_at=timezone.now())
    reaped = liveness.reap_stale()
    assert reaped.requeued == [f"run #{run.pk}"] and reaped.failed == []
    run.refresh_from_db()
    assert run.status == Status.QUEUED and run.checkpoint == {"work": "abc", "done": 16, "lost_workers": 1}
    assert run.message.startswith("re-queued: no heartbeat from gone:7 for ")
    assert sent() == ["workers.tasks.run_alignment"]
    assert AlignmentRun.objects.get(pk=live.pk).status == Status.RUNNING
    assert liveness.reap_stale().requeued == []  # a second reaper finds nothing to do
    assert sent() == ["workers.tasks.run_alignment"]
    event = AuditEvent.objects.get(action="worker.lost")
    assert (event.target, event.details["outcome"], event.details["worker"]) == (f"run #{run.pk}", "re-queued", "gone:7")


def test_a_job_is_requeued_with_its_own_task(project, settings, sent):
    job = Job.objects.create(project=project, kind="corpus-stats", status=Status.RUNNING, started_at=silent_for(3600))
    assert liveness.reap_stale().requeued == [f"job #{job.pk}"]  # no heartbeat ever: counted from its start
    assert sent() == ["workers.tasks.corpus_stats"]


def test_running_work_no_worker_ever_claimed_is_left_alone(project, settings, sent):
    AlignmentRun.objects.create(project=project, method="jaccard", status=Status.RUNNING)  # no start, no heartbeat
    assert liveness.reap_stale().requeued == [] and not sent()


def test_the_last_allowed_loss_fails_the_work_with_the_reason(project, settings, sent):
    settings.MAX_ATTEMPTS = 2
    run = lost_run(project, settings, checkpoint={"lost_workers": 1})
    reaped = liveness.reap_stale()
    assert reaped.failed == [f"run #{run.pk}"] and not sent()
    run.refresh_from_db()
    assert run.status == Status.FAILED and run.finished_at is not None
    assert "the worker was lost 2 times in a row" in run.error and "MAX_ATTEMPTS=2" in run.error


@pytest.mark.parametrize("method", ["jaccard", "muss-corpus"])
def test_a_run_planned_into_chunks_is_always_resumed(project, settings, sent, method):
    settings.MAX_ATTEMPTS = 1
    run = lost_run(project, settings, method=method, checkpoint={"lost_workers": 4, "chunks": 3})
    assert liveness.reap_stale().requeued == [f"run #{run.pk}"]
    assert AlignmentRun.objects.get(pk=run.pk).status == Status.QUEUED


def test_a_requeue_the_broker_refuses_leaves_the_work_for_the_next_pass(project, settings, tmp_path):
    run = lost_run(project, settings)
    with app_broker("redis://127.0.0.1:1/0"):  # nothing listens there
        from alignapp.celery import app

        app.conf.broker_connection_max_retries = 0
        try:
            assert liveness.reap_stale().requeued == []
        finally:
            app.conf.broker_connection_max_retries = None
    run.refresh_from_db()
    assert run.status == Status.RUNNING and "re-queueing failed" in run.message
    assert "lost_workers" not in run.checkpoint


# --- through the API -------------------------------------------------------------------------

def test_looking_at_a_run_requeues_it_when_its_worker_was_lost(api, users, project, settings, sent):
    run = lost_run(project, settings)
    liveness._last_pass[0] = 0.0
    data = api(users["rita"]).get(f"/api/runs/{run.pk}/").json()
    assert data["status"] == "queued" and data["retryable"] and not data["worker_lost"]
    assert sent() == ["workers.tasks.run_alignment"]


def test_the_api_says_when_a_worker_is_lost_and_retries_jobs(api, users, project, settings, sent):
    settings.WORKER_HEARTBEAT_SECONDS = 3600  # no reaping during this test: show the lost state
    liveness._last_pass[0] = 0.0
    liveness.maybe_reap()
    job = Job.objects.create(project=project, kind="corpus-stats", status=Status.RUNNING, worker="gone:3",
                             heartbeat_at=silent_for(settings.WORKER_STALE_SECONDS + 5))
    rita = api(users["rita"])
    shown = rita.get(f"/api/jobs/{job.pk}/").json()
    assert shown["status"] == "running" and shown["worker_lost"] and shown["retryable"] and shown["worker"] == "gone:3"
    response = rita.post(f"/api/jobs/{job.pk}/retry/")
    assert response.status_code == 202 and response.json()["status"] == "queued"
    again = rita.post(f"/api/jobs/{job.pk}/retry/")  # queued: its message is sent again
    assert again.status_code == 202 and sent() == ["workers.tasks.corpus_stats"] * 2
    Job.objects.filter(pk=job.pk).update(status=Status.SUCCEEDED)
    refused = rita.post(f"/api/jobs/{job.pk}/retry/")
    assert refused.status_code == 400 and "succeeded" in refused.json()["detail"]
    assert api(users["anna"]).post(f"/api/jobs/{job.pk}/retry/").status_code == 403
