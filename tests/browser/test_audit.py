"""A researcher starts a run and changes a member's role, then finds both on the project's audit log."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, Membership
from tests import factories
from tests.browser.conftest import login, screenshot
from tests.worker_process import app_broker

pytestmark = pytest.mark.browser


def test_a_researcher_sees_their_run_and_role_change_on_the_audit_log(page, transactional_db, tmp_path):
    for name in ("rita", "anna", "bob"):
        factories.make_user(name)
    project = factories.make_project("Newsela sample", rita="researcher", anna="annotator", bob="annotator")
    factories.make_article(project, "Bees", {"adv": [["Bees are dying.", "Pesticides are blamed."]],
                                             "ele": [["Bees die.", "People blame pesticides."]]})
    login(page, "rita", "pw-rita")
    with app_broker("filesystem://", tmp_path / "broker"):  # the queued task stays in tmp_path; no worker here
        page.goto(f"/projects/{project.pk}/")
        page.select_option("#start-run select[name=method]", "tfidf")
        page.click("#start-run button[type=submit]")
        assert "queued" in page.locator(".messages").inner_text()
    run = AlignmentRun.objects.get(project=project)

    page.goto(f"/projects/{project.pk}/settings/")
    page.select_option("#member-list tr[data-username=anna] .role-form select", "researcher")
    page.click("#member-list tr[data-username=anna] .role-form button")
    assert "anna is now researcher." in page.locator(".messages").inner_text()
    assert Membership.objects.get(project=project, user__username="anna").role == "researcher"

    page.goto(f"/projects/{project.pk}/")
    page.click("#open-audit")
    page.wait_for_url(f"**/projects/{project.pk}/audit/")
    rows = page.locator("#audit tbody tr")
    assert rows.count() == 2
    newest, oldest = rows.nth(0), rows.nth(1)
    assert newest.locator(".action").inner_text() == "changed a member's role"
    assert (newest.locator(".actor").inner_text(), newest.locator(".target").inner_text()) == ("rita", "anna")
    assert "old: annotator · new: researcher" in newest.locator(".details").inner_text()
    assert oldest.locator(".action").inner_text() == "started an alignment run"
    assert oldest.locator(".target").inner_text() == f"run #{run.pk}"

    page.select_option("#filter-action", "run.start")
    page.click("#audit-filters button[type=submit]")
    page.wait_for_url("**/audit/?action=run.start*")
    assert page.locator("#audit tbody tr").count() == 1
    assert page.locator("#audit tbody tr .target").inner_text() == f"run #{run.pk}"
    page.select_option("#filter-action", "")
    page.click("#audit-filters button[type=submit]")
    page.locator("#audit tbody tr").nth(1).wait_for()
    screenshot(page, "audit", full_page=False)
