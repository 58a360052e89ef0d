"""Error pages in the app's layout; run errors only for the project's researchers; run times shown."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import RequestFactory
from django.utils import timezone

from annotation.models import AlignmentRun
from annotation.serializers import HIDDEN_ERROR
from annotation.templatetags.alignapp import format_seconds
from annotation.views.errors import server_error

TRACEBACK = "Traceback (most recent call last):\n  File \"secret.py\", line 1\nRuntimeError: boom"


@pytest.fixture
def failed_run(project):
    now = timezone.now()
    return AlignmentRun.objects.create(project=project, method="crf", status="failed", error=TRACEBACK,
                                       started_at=now - timedelta(seconds=75), finished_at=now)


def test_the_404_page_uses_the_layout(client, users):
    client.force_login(users["anna"])
    response = client.get("/projects/999999/")
    assert response.status_code == 404
    html = response.content.decode()
    assert 'class="topbar"' in html and "Page not found" in html and "anna" in html
    assert "img/favicon.svg" in html


def test_the_403_page_uses_the_layout_and_says_why(client, users, project):
    client.force_login(users["anna"])
    response = client.get(f"/projects/{project.pk}/settings/")
    assert response.status_code == 403
    html = response.content.decode()
    assert 'class="topbar"' in html and "You can't do that here" in html
    assert "Only the project&#x27;s researchers change its settings." in html


def test_the_500_page_renders_without_a_request_context():
    response = server_error(RequestFactory().get("/"))
    assert response.status_code == 500
    html = response.content.decode()
    assert 'class="topbar"' in html and "Something went wrong" in html


@pytest.fixture
def shown_predictions(project):
    """Annotators see runs only where the project shows predictions (else they annotate blind: no runs)."""
    project.config = {**(project.config or {}), "show_predictions": True}
    project.save()
    return project


def test_annotators_do_not_see_a_failed_runs_error_in_the_api(api, users, project, failed_run, shown_predictions):
    data = api(users["anna"]).get(f"/api/runs/{failed_run.pk}/").json()
    assert data["error"] == HIDDEN_ERROR
    listed = api(users["anna"]).get(f"/api/runs/?project={project.pk}").json()
    rows = listed.get("results", listed)
    assert all("Traceback" not in (r["error"] or "") for r in rows)


def test_researchers_see_a_failed_runs_error_in_the_api(api, users, project, failed_run):
    assert api(users["rita"]).get(f"/api/runs/{failed_run.pk}/").json()["error"] == TRACEBACK
    assert api(users["admin"]).get(f"/api/runs/{failed_run.pk}/").json()["error"] == TRACEBACK


def test_annotators_do_not_see_a_failed_runs_error_on_the_project_page(client, users, project, failed_run,
                                                                      shown_predictions):
    client.force_login(users["anna"])
    html = client.get(f"/projects/{project.pk}/").content.decode()
    assert "Traceback" not in html and "RuntimeError" not in html
    assert "The run failed; the project's researchers can see why." in html


def test_researchers_see_the_error_and_the_run_time_on_the_project_page(client, users, project, failed_run):
    client.force_login(users["rita"])
    html = client.get(f"/projects/{project.pk}/").content.decode()
    assert "RuntimeError: boom" in html
    assert '<td class="time">1 min 15 s</td>' in html


def test_an_empty_runs_table_says_so(client, users, project):
    client.force_login(users["rita"])
    assert "No runs yet." in client.get(f"/projects/{project.pk}/").content.decode()


@pytest.mark.parametrize(("seconds", "text"), [(0, "0 s"), (59.4, "59 s"), (61, "1 min 01 s"), (3725, "1 h 02 min")])
def test_durations_read_like_a_clock(seconds, text):
    assert format_seconds(seconds) == text


def test_the_queued_message_is_tagged_with_the_run_so_the_page_can_clear_it(client, users, project, monkeypatch):
    from annotation.services.alignment import alignment_runs

    monkeypatch.setattr(alignment_runs, "start_run", lambda *a, **k: AlignmentRun.objects.create(project=project, method="crf"))
    client.force_login(users["rita"])
    response = client.post(f"/projects/{project.pk}/runs/", {"method": "crf", "params": "{}"}, follow=True)
    assert 'class="run-' in response.content.decode()
