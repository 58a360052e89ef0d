"""One set of rules for the API and the settings page: what the page refuses, the API refuses too.

Scheme changes once labels exist, config values (one schema: ``services.settings.config_schema``),
removing or demoting the last researcher, adding a member twice.
"""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, Label, Membership, ModelVersion, Project, Status
from annotation.services.review import qc
from tests import factories
from tests.annotation.services.review.test_queue import build_queue

GENERAL_FORM = {"description": "", "language": "en", "adjudicate": "disagreements"}
REFUSED_SCHEME = "The label scheme cannot change: the project already has labels given with the current scheme."


@pytest.fixture
def rita_page(client, users):
    client.force_login(users["rita"])
    return client


def detail(project) -> str:
    return f"/api/projects/{project.pk}/"


def stored(project) -> Project:
    return Project.objects.select_related("label_scheme").get(pk=project.pk)


def test_before_any_label_both_may_change_the_scheme(api, rita_page, users, project):
    response = api(users["rita"]).patch(detail(project), {"label_scheme": "wivico-validity"}, format="json")
    assert response.status_code == 200 and stored(project).label_scheme.slug == "wivico-validity"
    response = rita_page.post(f"/projects/{project.pk}/settings/general/",
                              {**GENERAL_FORM, "label_scheme": "aligned-partial-not"})
    assert response.status_code == 302 and stored(project).label_scheme.slug == "aligned-partial-not"


def test_once_labels_exist_the_api_refuses_a_scheme_change_as_the_page_does(api, rita_page, users, project):
    pairs, _ = build_queue(project, 1)
    Label.objects.create(pair=pairs[0], annotator=users["anna"], value="aligned")
    page = rita_page.post(f"/projects/{project.pk}/settings/general/", {**GENERAL_FORM, "label_scheme": "wivico-validity"})
    assert page.status_code == 400 and "already has labels" in page.content.decode()
    response = api(users["rita"]).patch(detail(project), {"label_scheme": "wivico-validity"}, format="json")
    assert response.status_code == 400 and response.json()["detail"] == REFUSED_SCHEME
    response = api(users["admin"]).put(detail(project), {"name": "Renamed", "language": "en",
                                                          "label_scheme": "wivico-validity"}, format="json")
    assert response.status_code == 400 and response.json()["detail"] == REFUSED_SCHEME
    assert stored(project).label_scheme.slug == "aligned-partial-not" and stored(project).name == project.name
    # the same scheme again is no change
    assert api(users["rita"]).patch(detail(project), {"label_scheme": "aligned-partial-not"}, format="json").status_code == 200


def test_a_qc_value_the_page_refuses_the_api_refuses_with_the_same_message(api, rita_page, users, project):
    page = rita_page.post(f"/projects/{project.pk}/settings/qc/", {"overlap": "11"})
    message = "must be <= 10, got 11"  # both read qc.QC_OPTIONS: the page under the field, the API under its name
    assert page.status_code == 400 and "must be &lt;= 10, got 11" in page.content.decode()
    response = api(users["rita"]).patch(detail(project), {"config": {"qc": {"overlap": 11}}}, format="json")
    assert response.status_code == 400 and f"overlap: {message}" in response.json()["config"]["qc"]
    assert stored(project).config == {}


@pytest.mark.parametrize("config,key,words", [
    ({"adjudicate": "sometimes"}, "adjudicate", "choose one of: disagreements, all"),
    ({"paragraph_corrections": "never"}, "paragraph_corrections", "choose one of: proposals, direct"),
    ({"encoder": "two\nlines"}, "encoder", "without line breaks"),
    ({"show_predictions": "yes"}, "show_predictions", "must be a bool"),
    ({"qc": {"min_seconds": -1}}, "qc", "min_seconds: must be >= 0, got -1"),
    ({"thresholds": {"aligned": "high"}}, "thresholds", "aligned: must be a float"),
    ({"queue_order": "newest"}, "queue_order", "corpus, random, uncertainty"),
    ({"colour": "red"}, "colour", "unknown setting; valid: adjudicate"),
])
def test_the_api_refuses_bad_config_values_naming_the_key_and_saves_nothing(api, users, project, config, key, words):
    before = stored(project).config
    response = api(users["rita"]).patch(detail(project), {"config": config}, format="json")
    assert response.status_code == 400 and words in response.json()["config"][key]
    assert stored(project).config == before


def test_a_new_project_through_the_api_gets_the_same_config_rules(api, users):
    rita = api(users["rita"])
    body = {"name": "New", "language": "en", "label_scheme": "aligned-partial-not"}
    response = rita.post("/api/projects/", {**body, "config": {"qc": {"overlap": 0}}}, format="json")
    assert response.status_code == 400 and "overlap: must be >= 1" in response.json()["config"]["qc"]
    other = factories.make_project("Other project")
    run = AlignmentRun.objects.create(project=other, method="jaccard", status=Status.SUCCEEDED)
    response = rita.post("/api/projects/", {**body, "config": {"queue_run": run.pk}}, format="json")
    assert response.status_code == 400 and "not a run of this project" in response.json()["config"]["queue_run"]
    assert not Project.objects.filter(name="New").exists()


def test_the_api_refuses_another_projects_runs_and_model_versions(api, users, project):
    other = factories.make_project("Other project")
    theirs = AlignmentRun.objects.create(project=other, method="jaccard", status=Status.SUCCEEDED)
    version = ModelVersion.objects.create(project=other, name="theirs", kind="crf", path="/tmp/theirs")
    rita = api(users["rita"])
    response = rita.patch(detail(project), {"config": {"default_model_version": version.pk}}, format="json")
    assert response.status_code == 400 and "not a model version of this project" in response.json()["config"]["default_model_version"]
    response = rita.patch(detail(project), {"config": {"queue_run": theirs.pk}}, format="json")
    assert response.status_code == 400 and "not a run of this project" in response.json()["config"]["queue_run"]
    ours = AlignmentRun.objects.create(project=project, method="jaccard", status=Status.SUCCEEDED)
    response = api(users["rita"]).post(f"/api/projects/{project.pk}/review-changes/",
                                       {"old": ours.pk, "new": theirs.pk}, format="json")
    assert response.status_code == 400 and "not a run of this project" in response.json()["queue_changes"]
    assert stored(project).config == {}


def test_a_valid_config_from_the_api_is_what_the_page_and_the_queue_then_use(api, rita_page, users, project):
    config = {"qc": {"overlap": 2, "min_seconds": 1.5}, "adjudicate": "all", "show_predictions": True,
              "paragraph_corrections": "direct"}
    response = api(users["rita"]).patch(detail(project), {"config": config}, format="json")
    assert response.status_code == 200 and response.json()["config"] == config
    assert (qc.qc_config(stored(project)).overlap, qc.qc_config(stored(project)).min_seconds) == (2, 1.5)
    page = rita_page.get(f"/projects/{project.pk}/settings/").content.decode()
    assert 'name="overlap"' in page and 'value="2"' in page
    # a config read back from the API goes back unchanged
    again = api(users["rita"]).patch(detail(project), {"config": response.json()["config"]}, format="json")
    assert again.status_code == 200


def test_the_last_researcher_is_neither_removed_nor_demoted_by_the_api_or_the_page(api, rita_page, users, project):
    rita_membership = Membership.objects.get(project=project, user=users["rita"])
    page = rita_page.post(f"/projects/{project.pk}/settings/members/{rita_membership.pk}/remove/", follow=True)
    assert "last researcher" in page.content.decode()
    response = api(users["admin"]).delete(f"/api/projects/{project.pk}/members/{rita_membership.pk}/")
    assert response.status_code == 400 and "last researcher" in response.json()["detail"]
    assert Membership.objects.filter(pk=rita_membership.pk, role="researcher").exists()
    # with a second researcher, the first may go (through the same service: audited, open items released)
    anna = Membership.objects.get(project=project, user=users["anna"])
    rita_page.post(f"/projects/{project.pk}/settings/members/{anna.pk}/role/", {"role": "researcher"})
    response = api(users["admin"]).delete(f"/api/projects/{project.pk}/members/{rita_membership.pk}/")
    assert response.status_code == 204 and not Membership.objects.filter(pk=rita_membership.pk).exists()


def test_a_member_added_twice_is_refused_by_both_with_the_same_message(api, rita_page, users, project):
    page = rita_page.post(f"/projects/{project.pk}/settings/members/", {"username": "anna", "role": "annotator"},
                          follow=True)
    assert "anna is already a member of this project." in page.content.decode()
    response = api(users["rita"]).post(f"/api/projects/{project.pk}/members/", {"username": "anna", "role": "researcher"},
                                       format="json")
    assert response.status_code == 400 and response.json()["detail"] == "anna is already a member of this project."
    assert Membership.objects.get(project=project, user=users["anna"]).role == "annotator"


def test_a_scheme_in_use_is_not_deleted_but_refused_with_the_projects_named(api, users, project):
    scheme = project.label_scheme
    response = api(users["admin"]).delete(f"/api/label-schemes/{scheme.pk}/")
    assert response.status_code == 409 and project.name in response.json()["detail"]
    assert stored(project).label_scheme_id == scheme.pk
