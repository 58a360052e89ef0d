"""Project pages share one heading pattern, "<project> · <page>", and empty tables say so."""
from __future__ import annotations

import pytest


@pytest.mark.parametrize(("path", "page"), [("settings/", "settings"), ("import/", "import a corpus")])
def test_project_pages_are_headed_by_the_project_and_the_page(client, users, project, path, page):
    client.force_login(users["rita"])
    html = client.get(f"/projects/{project.pk}/{path}").content.decode()
    assert f'<h1><a href="/projects/{project.pk}/">Newsela sample</a> · {page}</h1>' in html


def test_an_empty_exports_table_says_so(client, users, project):
    client.force_login(users["rita"])
    assert "No exports yet." in client.get(f"/projects/{project.pk}/export/").content.decode()
