"""An admin creates a project and a user and adds them as annotator; the annotator sees the guidelines first."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Membership, Project
from tests import factories
from tests.browser.conftest import login, screenshot

pytestmark = pytest.mark.browser


def test_an_admin_sets_up_a_project_and_the_new_annotator_reads_the_guidelines_first(page, transactional_db,
                                                                                       unread_guidelines):
    factories.make_user("boss", staff=True)
    factories.make_user("rita", researcher=True)
    login(page, "boss", "pw-boss")

    # a project, from the home page
    page.fill("#new-project-name", "Simple Wikipedia")
    page.select_option("#new-project-form select[name=label_scheme]", "sum4simp-quality")
    page.locator("#new-project").scroll_into_view_if_needed()
    screenshot(page, "project-create", full_page=False)
    page.click("#new-project-form button[type=submit]")
    project = Project.objects.get(name="Simple Wikipedia")
    page.wait_for_url(f"**/projects/{project.pk}/")
    assert "Project Simple Wikipedia created" in page.locator(".messages").inner_text()

    # a user, from the people page: a weak password first
    page.click("#nav-people")
    page.wait_for_url("**/people/")
    form = page.locator("#create-user-form")
    form.locator("input[name=username]").fill("nadia")
    form.locator("input[name=password1]").fill("nadia")
    form.locator("input[name=password2]").fill("nadia")
    form.locator("button[type=submit]").click()
    assert "too short" in page.locator("#create-user-errors").inner_text()
    form = page.locator("#create-user-form")
    form.locator("input[name=password1]").fill("correct horse battery")
    form.locator("input[name=password2]").fill("correct horse battery")
    form.locator("button[type=submit]").click()
    assert "nadia can now log in." in page.locator(".messages").inner_text()
    assert get_user_model().objects.get(username="nadia").is_active
    assert page.locator("#people tr[data-username=nadia] td.active").inner_text() == "active"
    assert page.locator("#people tr[data-username=rita] td").nth(2).inner_text() == "researcher"
    screenshot(page, "people", full_page=False)

    # nadia joins the project as annotator, picked from the suggestions
    page.goto(f"/projects/{project.pk}/settings/")
    page.locator("#member-username").press_sequentially("nad")
    page.wait_for_function("() => document.querySelectorAll('#user-suggestions option').length === 1")
    assert page.locator("#user-suggestions option").get_attribute("value") == "nadia"
    page.fill("#member-username", "nadia")
    page.select_option("#add-member select[name=role]", "annotator")
    page.click("#add-member button[type=submit]")
    assert "nadia added as annotator." in page.locator(".messages").inner_text()
    assert Membership.objects.get(project=project, user__username="nadia").role == "annotator"
    page.click(".topbar button.link")  # log out

    # nadia's first visit to the labelling page opens the scheme's guidelines
    login(page, "nadia", "correct horse battery")
    page.goto(f"/projects/{project.pk}/annotate/")
    guidelines = page.locator("#guidelines")
    guidelines.wait_for(state="visible")
    assert "Good partial" in guidelines.inner_text() and "Sum4Simp" in guidelines.inner_text()
    # they open at their beginning (the focused button is at the end of a long text)
    assert page.evaluate("() => document.querySelector('#guidelines .guidelines-card').scrollTop") == 0
    assert page.evaluate("() => document.activeElement.id") == "close-guidelines"
    screenshot(page, "guidelines-first-visit", full_page=False)
    page.keyboard.press("Escape")
    guidelines.wait_for(state="hidden")

    # not again on the next visit; `g` brings them back
    page.reload()
    page.wait_for_timeout(300)
    assert guidelines.is_hidden()
    page.keyboard.press("g")
    guidelines.wait_for(state="visible")
    page.click("#close-guidelines")
    guidelines.wait_for(state="hidden")


def test_changed_guidelines_are_shown_again(page, transactional_db, unread_guidelines):
    from annotation.services.projects import guidelines as service

    factories.make_user("nadia")
    project = factories.make_project("P", nadia="annotator")
    login(page, "nadia", "pw-nadia")
    page.goto(f"/projects/{project.pk}/annotate/")
    page.locator("#guidelines").wait_for(state="visible")
    page.keyboard.press("g")
    page.locator("#guidelines").wait_for(state="hidden")
    service.update(project, "# New rules\n\nLabel <b>carefully</b>.")
    page.reload()
    page.locator("#guidelines").wait_for(state="visible")
    assert page.locator("#guidelines h1").inner_text() == "New rules"
    assert "<b>carefully</b>" in page.locator("#guidelines").inner_text()  # shown as text, not bold


def test_an_api_call_after_the_session_expired_goes_to_the_login_page_and_back(page, transactional_db):
    factories.make_user("rita", researcher=True)
    project = factories.make_project("P", rita="researcher")
    login(page, "rita", "pw-rita")
    page.goto(f"/projects/{project.pk}/settings/")
    page.context.clear_cookies()  # the session expires
    page.locator("#member-username").press_sequentially("ri")
    page.wait_for_url("**/login/?next=*")
    assert f"next=%2Fprojects%2F{project.pk}%2Fsettings%2F" in page.url
    page.fill("input[name=username]", "rita")
    page.fill("input[name=password]", "pw-rita")
    page.click("button[type=submit]")
    page.wait_for_url(f"**/projects/{project.pk}/settings/")
