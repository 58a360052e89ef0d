"""Project settings: general settings, QC values checked by qc's validation, members and the last-researcher guard."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, Assignment, LabelScheme, Membership, Project
from annotation.services.review import qc
from annotation.services.settings import project_settings as service
from tests import factories
from tests.annotation.services.review.test_adjudication import make_pairs, vote


def membership(project, username) -> Membership:
    return Membership.objects.get(project=project, user__username=username)


def general(**changes) -> dict:
    return {"description": "News at three levels", "language": "fr", "show_predictions": True,
            "adjudicate": "all", **changes}


def test_general_settings_are_saved_and_other_config_is_kept(project):
    project.config = {"encoder": "labse"}
    project.save()
    service.update_general(project, **general(description="  News  "))
    project.refresh_from_db()
    assert (project.description, project.language) == ("News", "fr")
    assert project.config == {"encoder": "labse", "show_predictions": True, "adjudicate": "all"}


@pytest.mark.parametrize("changes,message", [
    ({"language": "xx"}, "Unsupported language 'xx'; choose one of: en, fr"),
    ({"adjudicate": "some"}, "must be one of: disagreements, all"),
    ({"label_scheme": "no-such-scheme"}, "Unknown label scheme"),
])
def test_bad_general_settings_are_refused_and_nothing_is_saved(project, changes, message):
    with pytest.raises(service.SettingsError, match=message):
        service.update_general(project, **general(**changes))
    project.refresh_from_db()
    assert (project.language, project.config) == ("en", {})


def test_the_label_scheme_changes_only_while_the_project_has_no_labels(project, users):
    other = LabelScheme.objects.exclude(pk=project.label_scheme_id).first()
    service.update_general(project, **general(label_scheme=other.slug))
    assert Project.objects.get(pk=project.pk).label_scheme == other
    [pair] = make_pairs(project, 1)
    vote(pair, users["anna"], other.value_names()[0])
    assert service.has_labels(project)
    with pytest.raises(service.SettingsError, match="already has labels"):
        service.update_general(project, **general(label_scheme=project.label_scheme.slug))
    assert Project.objects.get(pk=project.pk).label_scheme == other


def test_qc_form_values_are_parsed_once_into_the_settings_and_blanks_mean_the_default():
    config = service.parse_qc_form({"overlap": " 2 ", "min_seconds": "0", "exclusion_threshold": "0.9",
                                    "test_every": ""})
    assert config == qc.QcConfig(overlap=2, min_seconds=0.0, exclusion_threshold=0.9)


def test_qc_settings_are_saved_with_defaults_filled_in(project):
    service.update_qc(project, qc.QcConfig.parse({"overlap": 2, "min_seconds": 0}))
    project.refresh_from_db()
    assert project.config["qc"] == {**qc.DEFAULTS, "overlap": 2, "min_seconds": 0}
    assert qc.qc_config(project).overlap == 2


def test_every_bad_qc_field_is_reported_with_its_declared_range_and_nothing_is_saved(project):
    with pytest.raises(qc.QcConfigError) as exc:
        service.parse_qc_form({"overlap": "0", "min_seconds": "5", "exclusion_threshold": "1.5",
                               "min_test_answers": "many"})
    assert set(exc.value.problems) == {"overlap", "exclusion_threshold", "min_test_answers"}
    assert exc.value.problems["overlap"] == "must be >= 1, got 0"
    assert exc.value.problems["min_test_answers"] == "must be an int, got 'many'"
    project.refresh_from_db()
    assert project.config == {}


def test_members_list_annotators_with_test_accuracy_and_exclusion(project, users):
    [p1, p2] = make_pairs(project, 2)
    for pair in (p1, p2):
        Adjudication.objects.create(pair=pair, value="aligned")
    vote(p1, users["anna"], "aligned", test=True), vote(p2, users["anna"], "partial", test=True)
    qc.exclude(users["anna"], project, "Too many wrong test answers.")
    rows = {row.membership.user.username: row for row in service.member_rows(project)}
    assert [row.membership.user.username for row in service.member_rows(project)] == ["rita", "anna"]
    assert (rows["anna"].answers, rows["anna"].accuracy) == (2, 0.5)
    assert rows["anna"].excluded_at is not None and rows["anna"].exclusion_reason == "Too many wrong test answers."
    assert rows["rita"].answers is None and rows["rita"].excluded_at is None


def test_a_member_is_added_by_username_once(project, users):
    factories.make_user("bob")
    added = service.add_member(project, " bob ", "annotator")
    assert (added.user.username, added.role) == ("bob", "annotator")
    with pytest.raises(service.SettingsError, match="bob is already a member"):
        service.add_member(project, "bob", "researcher")
    with pytest.raises(service.SettingsError, match="No user named 'nobody'"):
        service.add_member(project, "nobody", "annotator")
    with pytest.raises(service.SettingsError, match="Role must be one of"):
        service.add_member(project, "olga", "owner")


def test_the_last_researcher_can_be_neither_demoted_nor_removed(project):
    rita = membership(project, "rita")
    with pytest.raises(service.SettingsError, match="rita: they are the project's last researcher"):
        service.change_role(project, rita.pk, "annotator")
    with pytest.raises(service.SettingsError, match="last researcher"):
        service.remove_member(project, rita.pk)
    assert Membership.objects.get(pk=rita.pk).role == "researcher"


def test_a_researcher_can_step_down_once_another_one_exists(project):
    anna = service.change_role(project, membership(project, "anna").pk, "researcher")
    assert anna.role == "researcher"
    service.change_role(project, membership(project, "rita").pk, "annotator")
    service.remove_member(project, membership(project, "rita").pk)
    assert list(project.memberships.values_list("user__username", "role")) == [("anna", "researcher")]


def test_removing_an_annotator_keeps_their_labels_and_frees_their_open_items(project, users):
    [done, open_] = make_pairs(project, 2)
    vote(done, users["anna"], "aligned")
    Assignment.objects.create(pair=open_, annotator=users["anna"])
    service.remove_member(project, membership(project, "anna").pk)
    assert not project.memberships.filter(user=users["anna"]).exists()
    assert done.labels.count() == 1 and not Assignment.objects.exists()


def test_members_of_another_project_cannot_be_changed_from_this_one(project):
    olga = Membership.objects.get(user__username="olga")
    with pytest.raises(service.SettingsError, match="not a member of this project"):
        service.remove_member(project, olga.pk)
    assert Membership.objects.filter(pk=olga.pk).exists()


def test_reinstating_undoes_a_qc_exclusion(project, users):
    anna = membership(project, "anna")
    with pytest.raises(service.SettingsError, match="anna is not excluded"):
        service.reinstate_member(project, anna.pk)
    qc.exclude(users["anna"], project, "below threshold")
    reinstated = service.reinstate_member(project, anna.pk)
    assert (reinstated.excluded_at, reinstated.exclusion_reason) == (None, "")
    assert qc.exclusion_reason(users["anna"], project) is None


def test_annotators_paragraph_corrections_are_proposals_by_default_and_can_apply_directly(project):
    assert service.paragraph_corrections(project) == "proposals"
    service.update_general(project, **general(paragraph_corrections="direct"))
    project.refresh_from_db()
    assert service.paragraph_corrections(project) == "direct" and project.config["paragraph_corrections"] == "direct"
    service.update_general(project, **general())  # not given: kept as it is
    assert service.paragraph_corrections(Project.objects.get(pk=project.pk)) == "direct"
    with pytest.raises(service.SettingsError, match="must be one of: proposals, direct"):
        service.update_general(project, **general(paragraph_corrections="sometimes"))
    assert Project.objects.get(pk=project.pk).config["paragraph_corrections"] == "direct"
