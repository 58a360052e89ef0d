"""Guidelines on the settings page (researchers edit) and the labelling page (annotators read)."""
from __future__ import annotations

from annotation.services.projects import guidelines


def test_researchers_save_guidelines_from_the_settings_page(client, users, project):
    client.force_login(users["rita"])
    response = client.post(f"/projects/{project.pk}/settings/guidelines/", {"guidelines": "# Ours\n\n<script>x</script>"})
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.config["guidelines"].startswith("# Ours")
    html = client.get(f"/projects/{project.pk}/settings/").content.decode()
    assert "&lt;script&gt;x&lt;/script&gt;" in html and "<script>x</script>" not in html


def test_annotators_cannot_change_guidelines(client, users, project):
    client.force_login(users["anna"])
    assert client.post(f"/projects/{project.pk}/settings/guidelines/", {"guidelines": "# Mine"}).status_code == 403


def test_too_long_guidelines_re_render_the_page_with_the_error(client, users, project):
    client.force_login(users["rita"])
    response = client.post(f"/projects/{project.pk}/settings/guidelines/", {"guidelines": "x" * 60_000})
    assert response.status_code == 400
    assert "at most" in response.content.decode()


def test_the_labelling_page_carries_the_rendered_guidelines_and_their_version(client, users, project):
    guidelines.update(project, "# House rules\n\n<b>never</b> guess")
    client.force_login(users["anna"])
    response = client.get(f"/projects/{project.pk}/annotate/")
    html = response.content.decode()
    assert "<h1>House rules</h1>" in html and "&lt;b&gt;never&lt;/b&gt;" in html
    project.refresh_from_db()
    assert guidelines.version(guidelines.project_guidelines(project)) in html
