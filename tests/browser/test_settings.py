"""A researcher changes QC settings, adds an annotator and reinstates an excluded one on the settings page."""
from __future__ import annotations

import pytest

from annotation.models import Membership, Project
from annotation.services.corpus.demo import ensure_demo
from annotation.services.review import qc
from tests.browser.conftest import login, screenshot

pytestmark = pytest.mark.browser


def test_a_researcher_manages_qc_and_members_from_the_settings_page(page, transactional_db):
    project, _ = ensure_demo()
    Membership.objects.filter(project=project, user__username="annotator2").delete()
    annotator = Membership.objects.get(project=project, user__username="annotator")
    qc.exclude(annotator.user, project, "Your accuracy on test questions is 40% (2 of 5), below the project's 85%.")

    login(page, "researcher", "researcher")
    page.goto(f"/projects/{project.pk}/")
    page.click("#open-settings")
    page.wait_for_url(f"**/projects/{project.pk}/settings/")
    assert "excluded" in page.locator("#member-list tr[data-username=annotator] .exclusion").inner_text()

    page.fill("#qc-min_seconds", "0")
    page.fill("#qc-overlap", "2")
    page.click("#qc-form button[type=submit]")
    assert "Quality-control settings saved." in page.locator(".messages").inner_text()
    config = qc.qc_config(Project.objects.get(pk=project.pk))
    assert (config.overlap, config.min_seconds) == (2, 0)
    assert page.input_value("#qc-overlap") == "2"

    page.fill("#qc-overlap", "0")
    page.click("#qc-form button[type=submit]")
    assert "must be >= 1, got 0" in page.locator("#qc tr[data-field=overlap] .qc-error").inner_text()
    assert qc.qc_config(Project.objects.get(pk=project.pk)).overlap == 2

    page.goto(f"/projects/{project.pk}/settings/")
    page.fill("#add-member input[name=username]", "annotator2")
    page.select_option("#add-member select[name=role]", "annotator")
    page.click("#add-member button[type=submit]")
    assert "annotator2 added as annotator." in page.locator(".messages").inner_text()
    assert Membership.objects.get(project=project, user__username="annotator2").role == "annotator"

    page.click("#member-list tr[data-username=annotator] .reinstate-form button")
    assert "annotator reinstated" in page.locator(".messages").inner_text()
    annotator.refresh_from_db()
    assert annotator.excluded_at is None and annotator.exclusion_reason == ""
    assert "active" in page.locator("#member-list tr[data-username=annotator] .exclusion").inner_text()
    screenshot(page, "settings")
