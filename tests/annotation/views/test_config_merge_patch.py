"""``PATCH /api/projects/<id>/ {"config": …}`` is a JSON merge patch (RFC 7396) and the audit log names each
changed key with its old and new value (issue 19 item 6); ``PUT`` still replaces the whole config."""
from __future__ import annotations

from annotation.models import AuditEvent, Project
from annotation.services.settings.project_settings import config_changes, merge_patch

FULL = {"guidelines": "Read the whole article first.", "encoder": "all-MiniLM-L6-v2", "queue_order": "random",
        "qc": {"overlap": 2, "min_seconds": 1.5}, "adjudicate": "all"}


def detail(project) -> str:
    return f"/api/projects/{project.pk}/"


def test_merge_patch_follows_rfc_7396():
    assert merge_patch({"a": "b", "c": {"d": "e", "f": "g"}}, {"a": "z", "c": {"f": None}}) == {"a": "z", "c": {"d": "e"}}
    assert merge_patch({"a": [1, 2]}, {"a": [3]}) == {"a": [3]}  # arrays replace
    assert merge_patch({"a": {"b": 1}}, {"a": 5}) == {"a": 5}
    assert merge_patch({"a": 1}, {"b": {"c": None}}) == {"a": 1, "b": {}}
    target = {"a": {"b": 1}}
    merge_patch(target, {"a": {"b": 2}})
    assert target == {"a": {"b": 1}}, "the target is not modified"


def test_config_changes_are_dotted_key_paths_with_old_and_new():
    assert config_changes({"qc": {"overlap": 2, "min_seconds": 1.5}, "encoder": "x"},
                          {"qc": {"overlap": 3, "min_seconds": 1.5}, "queue_order": "random"}) == {
        "encoder": {"old": "x", "new": None}, "qc.overlap": {"old": 2, "new": 3},
        "queue_order": {"old": None, "new": "random"}}


def test_a_partial_config_patch_changes_only_what_it_names(api, users, project):
    Project.objects.filter(pk=project.pk).update(config=FULL)
    response = api(users["rita"]).patch(detail(project), {"config": {"qc": {"overlap": 3}}}, format="json")
    assert response.status_code == 200
    expected = {**FULL, "qc": {"overlap": 3, "min_seconds": 1.5}}
    assert response.json()["config"] == expected
    assert Project.objects.get(pk=project.pk).config == expected
    event = AuditEvent.objects.get(action="project.settings")
    assert event.details == {"changed": ["config"], "config": {"qc.overlap": {"old": 2, "new": 3}}}


def test_null_removes_a_key_and_the_audit_shows_it(api, users, project):
    Project.objects.filter(pk=project.pk).update(config=FULL)
    response = api(users["rita"]).patch(detail(project), {"config": {"encoder": None, "queue_order": "corpus"}},
                                        format="json")
    assert response.status_code == 200
    config = Project.objects.get(pk=project.pk).config
    assert "encoder" not in config and config["queue_order"] == "corpus" and config["guidelines"] == FULL["guidelines"]
    assert AuditEvent.objects.get(action="project.settings").details["config"] == {
        "encoder": {"old": "all-MiniLM-L6-v2", "new": None}, "queue_order": {"old": "random", "new": "corpus"}}


def test_the_merged_config_is_validated_and_a_bad_patch_saves_nothing(api, users, project):
    Project.objects.filter(pk=project.pk).update(config=FULL)
    response = api(users["rita"]).patch(detail(project), {"config": {"qc": {"overlap": 11}}}, format="json")
    assert response.status_code == 400 and "overlap: must be <= 10, got 11" in response.json()["config"]["qc"]
    response = api(users["rita"]).patch(detail(project), {"config": ["not", "an", "object"]}, format="json")
    assert response.status_code == 400
    assert Project.objects.get(pk=project.pk).config == FULL
    assert not AuditEvent.objects.filter(action="project.settings").exists()


def test_sending_the_whole_config_back_changes_nothing_and_put_replaces_it(api, users, project):
    Project.objects.filter(pk=project.pk).update(config=FULL)
    rita = api(users["rita"])
    assert rita.patch(detail(project), {"config": FULL}, format="json").status_code == 200
    assert not AuditEvent.objects.filter(action="project.settings").exists()
    response = rita.put(detail(project), {"name": project.name, "language": "en", "label_scheme": "aligned-partial-not",
                                          "config": {"adjudicate": "all"}}, format="json")
    assert response.status_code == 200 and Project.objects.get(pk=project.pk).config == {"adjudicate": "all"}
