"""An unknown address or someone else's project shows the 404 page inside the app's layout."""
from __future__ import annotations

import pytest

from tests import factories
from tests.browser.conftest import login, screenshot

pytestmark = pytest.mark.browser


def test_another_projects_page_is_a_404_in_the_app_layout(page, transactional_db):
    factories.make_user("nadia")
    mine = factories.make_project("Mine", nadia="annotator")
    theirs = factories.make_project("Theirs")
    login(page, "nadia", "pw-nadia")

    response = page.goto(f"/projects/{theirs.pk}/")
    assert response.status == 404
    assert page.locator("h1").inner_text() == "Page not found"
    assert "not a member of" in page.locator("#error-404").inner_text()
    assert "nadia" in page.locator(".topbar").inner_text()  # the layout: top bar with who is signed in
    assert "Theirs" not in page.content()
    screenshot(page, "404", full_page=False)

    page.click("#error-404 a")
    page.wait_for_url("**/")
    assert page.locator(f"a[href='/projects/{mine.pk}/']").is_visible()
    assert page.goto("/no/such/page/").status == 404
    assert page.locator("h1").inner_text() == "Page not found"
