"""A run whose worker was lost: opening its page puts it back in the queue, the page names the
worker that went silent and offers Retry; a run whose worker is alive offers Cancel, not Retry."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import AlignmentRun
from annotation.services.background import liveness
from annotation.services.corpus.demo import ensure_demo
from tests.browser.conftest import login
from tests.worker_process import app_broker

pytestmark = pytest.mark.browser


def test_a_lost_run_is_requeued_when_its_page_opens_and_a_live_one_cannot_be_retried(page, transactional_db, tmp_path, settings):
    project, _ = ensure_demo()
    silent = timezone.now() - timedelta(seconds=settings.WORKER_STALE_SECONDS + 30)
    lost = AlignmentRun.objects.create(project=project, method="jaccard", status="running", attempts=1, progress=30,
                                       worker="gone:7", started_at=silent, heartbeat_at=silent)
    live = AlignmentRun.objects.create(project=project, method="tfidf", status="running", attempts=1, progress=10,
                                       worker="busy:8", started_at=timezone.now(), heartbeat_at=timezone.now())
    folder = tmp_path / "broker"
    with app_broker("filesystem://", folder):
        liveness._last_pass[0] = 0.0  # this process has not reaped yet
        login(page, "researcher", "researcher")
        page.goto(f"/runs/{lost.pk}/")
        assert page.locator("#run-status").inner_text() == "queued"
        assert "re-queued: no heartbeat from gone:7 for" in page.locator("#run-summary").inner_text()
        page.click("#retry-run")  # queued: its message is sent again
        page.wait_for_function("() => document.querySelector('#run-message').textContent.includes('queued again')")
        assert len(list((folder / "out").glob("*.msg"))) == 2

        page.goto(f"/runs/{live.pk}/")
        assert page.locator("#run-status").inner_text() == "running"
        assert page.locator("#run-worker").inner_text().startswith("busy:8, alive")
        assert page.locator("#cancel-run").is_visible() and not page.locator("#retry-run").is_visible()
    assert AlignmentRun.objects.get(pk=live.pk).status == "running"
