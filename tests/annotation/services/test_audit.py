"""Each audited action writes exactly one event (who, which project, what) at the moment it takes
effect, in the service that performs it; a refused or rolled-back action writes none."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.db import transaction

from annotation.models import AlignmentRun, AuditEvent, Job, Membership, ModelVersion, Project, Split, Status
from annotation.services import audit
from annotation.services import export as exporting
from annotation.services.alignment import alignment_runs, run_deletion
from annotation.services.background import jobs, progress
from annotation.services.export import splits
from annotation.services.projects import creation, guidelines, people
from annotation.services.review import qc
from annotation.services.settings import project_settings as settings_service
from annotation.services.training import versions as training
from tests import factories
from tests.annotation.services.training.conftest import completed  # noqa: F401 - fixture: exhaustive training data


def only_event(action: str) -> AuditEvent:
    """The one event of ``action``; fails when there is none or more than one."""
    events = list(AuditEvent.objects.filter(action=action))
    assert len(events) == 1, [(e.action, e.target) for e in AuditEvent.objects.all()]
    return events[0]


def actions() -> list[str]:
    return sorted(AuditEvent.objects.values_list("action", flat=True))


@pytest.fixture
def article(project):
    return factories.make_article(project, "Bees", {"adv": [["Bees are dying."]], "ele": [["Bees die."]]})


def make_run(project, status=Status.SUCCEEDED, method="tfidf") -> AlignmentRun:
    return AlignmentRun.objects.create(project=project, method=method, status=status)


# --- runs --------------------------------------------------------------------------------------

def test_starting_a_run_records_who_started_which_run(project, users):
    run = alignment_runs.start_run(project, "tfidf", user=users["rita"], enqueue=False)
    event = only_event("run.start")
    assert (event.actor, event.project, event.target) == (users["rita"], project, f"run #{run.pk}")
    assert event.details == {"method": "tfidf"}


def test_a_refused_run_records_nothing(project, users):
    with pytest.raises(ValueError):
        alignment_runs.start_run(project, "no-such-method", user=users["rita"], enqueue=False)
    assert not AuditEvent.objects.exists()


def test_retrying_a_failed_run_is_recorded_and_a_refused_retry_is_not(project, users):
    failed, done = make_run(project, Status.FAILED), make_run(project)
    jobs.retry_run(failed, user=users["rita"])
    with pytest.raises(ValueError):
        jobs.retry_run(done, user=users["rita"])
    event = only_event("run.retry")
    assert (event.actor, event.project, event.target) == (users["rita"], project, f"run #{failed.pk}")


def test_cancelling_a_run_is_recorded_once_and_cancelling_a_finished_one_not_at_all(project, users):
    queued = make_run(project, Status.QUEUED)
    assert progress.cancel(AlignmentRun, queued.pk, user=users["rita"])
    assert not progress.cancel(AlignmentRun, queued.pk, user=users["rita"])  # already cancelled
    assert not progress.cancel(AlignmentRun, make_run(project).pk, user=users["rita"])
    event = only_event("run.cancel")
    assert (event.actor, event.project, event.target) == (users["rita"], project, f"run #{queued.pk}")


def test_deleting_a_run_is_recorded_with_what_went(project, users):
    run = make_run(project)
    pk = run.pk
    run_deletion.delete_run(run, user=users["rita"])
    event = only_event("run.delete")
    assert (event.actor, event.project, event.target) == (users["rita"], project, f"run #{pk}")
    assert event.details == {"method": "tfidf", "predictions": 0, "pairs": 0}
    with pytest.raises(ValueError):
        run_deletion.delete_run(make_run(project, Status.RUNNING), user=users["rita"])
    assert actions() == ["run.delete"]


def test_a_management_command_is_recorded_without_an_actor_as_via_command(project):
    call_command("align", str(project.pk), "--method", "tfidf", stdout=io.StringIO())
    event = only_event("run.start")
    assert event.actor is None and event.project == project and event.details == {"method": "tfidf", "via": "command"}


# --- trainings and models ----------------------------------------------------------------------

def test_starting_a_training_is_recorded(project, users, completed):  # noqa: F811
    job = training.start_training(project, user=users["rita"], enqueue=False)
    event = only_event("training.start")
    assert (event.actor, event.project, event.target) == (users["rita"], project, f"job #{job.pk}")


def test_a_refused_training_records_nothing(project, users):
    with pytest.raises(training.TrainingError):
        training.start_training(project, user=users["rita"], enqueue=False)  # nothing to train on
    assert not AuditEvent.objects.exists()


def test_cancelling_a_training_and_another_job_are_told_apart(project, users):
    train = Job.objects.create(project=project, kind=training.TRAIN_JOB)
    stats = Job.objects.create(project=project, kind="corpus-stats")
    assert training.cancel(train, user=users["rita"])
    assert progress.cancel(Job, stats.pk, user=users["admin"])
    assert only_event("training.cancel").target == f"job #{train.pk}"
    other = only_event("job.cancel")
    assert (other.actor, other.target, other.details) == (users["admin"], f"job #{stats.pk}", {"kind": "corpus-stats"})


def test_promoting_a_model_version_is_recorded(project, users):
    version = ModelVersion.objects.create(project=project, name="crf-1", kind="crf", path="/nowhere")
    training.promote(version, user=users["rita"])
    event = only_event("model.promote")
    assert (event.actor, event.project, event.target) == (users["rita"], project, "crf-1")
    assert event.details["version"] == version.pk and event.details["confirmed"] is False
    assert event.details["previous_default"] is None and "warnings" in event.details


# --- splits and exports ------------------------------------------------------------------------

def test_moving_an_article_to_another_split_is_recorded_and_a_no_op_is_not(project, users, article):
    splits.set_split(article, "train", user=users["rita"])
    splits.set_split(article, "train", user=users["rita"])  # unchanged
    event = only_event("split.change")
    assert (event.actor, event.project, event.target) == (users["rita"], project, "article Bees")
    assert event.details == {"old": "", "new": "train", "override": False, "reason": ""}


def test_a_refused_change_of_a_locked_split_records_nothing_and_an_override_one_event(project, users, article):
    Split.objects.create(article=article, name="train", locked=True)
    with pytest.raises(splits.SplitLocked):
        splits.set_split(article, "test", user=users["rita"])
    assert not AuditEvent.objects.exists()
    splits.set_split(article, "test", user=users["rita"], override=True, reason="leak")
    assert only_event("split.change").details == {"old": "train", "new": "test", "override": True, "reason": "leak"}


def test_assigning_splits_is_recorded_when_it_changes_something(project, users, article):
    splits.assign(project, {"mode": "counts", "train": 1, "dev": 0, "test": 0}, user=users["rita"])
    splits.assign(project, {"mode": "counts", "train": 1, "dev": 0, "test": 0}, user=users["rita"])  # nothing new
    event = only_event("split.change")
    assert (event.actor, event.target, event.details["assigned"]) == (users["rita"], "splits by policy", 1)


def test_unlocking_splits_is_recorded_once_for_the_project(project, users, article):
    Split.objects.create(article=article, name="train", locked=True)
    assert splits.unlock(project, user=users["rita"], reason="new policy") == 1
    assert splits.unlock(project, user=users["rita"], reason="again") == 0  # nothing locked: no event
    assert only_event("split.change").details == {"unlocked": 1, "reason": "new policy"}


def test_an_export_is_recorded_when_it_is_written(project, users, article, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    export = exporting.run_export(project, exporting.ExportOptions.parse({"formats": ["jsonl"]}), user=users["rita"],
                                  archive=False)
    event = only_event("export")
    assert (event.actor, event.project, event.target) == (users["rita"], project, f"export #{export.pk}")
    assert event.details == {"kind": "gold", "formats": ["jsonl"], "pairs": 0}
    assert only_event("split.change").actor == users["rita"]  # the export gave the article its split


# --- projects, members, settings ---------------------------------------------------------------

def test_creating_a_project_is_one_event_even_with_guidelines(users):
    project = creation.create_project(users["rita"], name="Wiki", language="en", label_scheme="aligned-partial-not",
                                      guidelines="Label carefully.")
    assert actions() == ["project.create"]
    event = only_event("project.create")
    assert (event.actor, event.project, event.target) == (users["rita"], project, "Wiki")


def test_a_refused_project_records_nothing(project, users):
    with pytest.raises(creation.ProjectError):
        creation.create_project(users["rita"], name=project.name, language="en", label_scheme="aligned-partial-not")
    assert not AuditEvent.objects.exists()


def test_member_changes_are_recorded_with_the_member_and_role(project, users):
    rita = users["rita"]
    added = settings_service.add_member(project, "olga", "annotator", by=rita)
    settings_service.change_role(project, added.pk, "researcher", by=rita)
    settings_service.change_role(project, added.pk, "researcher", by=rita)  # unchanged: no event
    settings_service.remove_member(project, added.pk, by=rita)
    assert actions() == ["member.add", "member.remove", "member.role"]
    assert {(e.action, e.actor, e.project, e.target) for e in AuditEvent.objects.all()} == {
        ("member.add", rita, project, "olga"), ("member.role", rita, project, "olga"),
        ("member.remove", rita, project, "olga")}
    assert only_event("member.role").details == {"old": "annotator", "new": "researcher"}


def test_a_refused_member_change_records_nothing(project, users):
    rita = Membership.objects.get(project=project, user=users["rita"])
    with pytest.raises(settings_service.SettingsError):
        settings_service.change_role(project, rita.pk, "annotator", by=users["rita"])  # the last researcher
    with pytest.raises(settings_service.SettingsError):
        settings_service.add_member(project, "anna", "annotator", by=users["rita"])  # a member already
    assert not AuditEvent.objects.exists()


def test_a_rolled_back_member_change_leaves_no_event(project, users):
    with pytest.raises(RuntimeError), transaction.atomic():
        settings_service.add_member(project, "olga", "annotator", by=users["rita"])
        raise RuntimeError("something after it failed")
    assert not AuditEvent.objects.exists() and not project.memberships.filter(user=users["olga"]).exists()


def test_reinstating_an_excluded_annotator_is_recorded(project, users):
    from annotation.services.review import qc

    qc.exclude(users["anna"], project, "low accuracy")
    anna = Membership.objects.get(project=project, user=users["anna"])
    settings_service.reinstate_member(project, anna.pk, by=users["rita"])
    assert (only_event("member.reinstate").target, only_event("member.reinstate").actor) == ("anna", users["rita"])


def test_settings_changes_name_what_changed_and_a_save_without_changes_records_nothing(project, users):
    rita = users["rita"]
    general = {"description": "", "language": "en", "show_predictions": False, "adjudicate": "disagreements"}
    settings_service.update_general(project, **general, by=rita)
    assert actions() == ["project.settings"]  # the first save writes show_predictions/adjudicate explicitly
    AuditEvent.objects.all().delete()
    settings_service.update_general(project, **general, by=rita)
    assert not AuditEvent.objects.exists()
    settings_service.update_general(project, **{**general, "language": "de", "description": "Wiki"}, by=rita)
    assert only_event("project.settings").details == {"changed": ["description", "language"]}
    AuditEvent.objects.all().delete()
    settings_service.update_qc(project, settings_service.parse_qc_form({"overlap": "2"}), by=rita)
    settings_service.update_language_tools(project, encoder="", spacy_pipeline="", by=rita)
    guidelines.update(project, "Be careful.", by=rita)
    assert sorted(tuple(e.details["changed"]) for e in AuditEvent.objects.all()) == [
        ("guidelines",), ("language tools",), ("qc",)]
    assert {e.actor for e in AuditEvent.objects.all()} == {rita}


def test_refused_settings_record_nothing(project, users):
    with pytest.raises(qc.QcConfigError):
        settings_service.update_qc(project, settings_service.parse_qc_form({"overlap": "0"}), by=users["rita"])
    with pytest.raises(settings_service.SettingsError):
        settings_service.update_general(project, description="", language="xx", show_predictions=False,
                                        adjudicate="disagreements", by=users["rita"])
    assert not AuditEvent.objects.exists()


# --- accounts ----------------------------------------------------------------------------------

def test_account_changes_are_site_wide_events_by_the_admin(users):
    admin = users["admin"]
    people.create_user("nina", "a-long-unusual-passphrase", by=admin)
    people.invite_user("otto", researcher=True, by=admin)
    people.set_active(users["anna"], False, by=admin)
    people.set_active(users["anna"], False, by=admin)  # already deactivated: no event
    people.set_active(users["anna"], True, by=admin)
    assert sorted((e.action, e.target) for e in AuditEvent.objects.all()) == [
        ("user.activate", "anna"), ("user.create", "nina"), ("user.deactivate", "anna"), ("user.invite", "otto")]
    assert {(e.actor, e.project) for e in AuditEvent.objects.all()} == {(admin, None)}
    assert only_event("user.invite").details == {"researcher": True}


def test_a_refused_account_records_nothing(users):
    with pytest.raises(people.PeopleError):
        people.create_user("nina", "123", by=users["admin"])
    with pytest.raises(people.PeopleError):
        people.set_active(users["admin"], False, by=users["admin"])
    assert not AuditEvent.objects.exists()


# --- the log itself ----------------------------------------------------------------------------

def test_an_unknown_action_is_refused_with_the_valid_ones():
    with pytest.raises(ValueError, match="unknown audit action 'run.strat'; valid: .*run.start"):
        audit.record("run.strat")


def test_events_filter_by_action_group_and_user(project, users):
    audit.record("run.start", actor=users["rita"], project=project, target="run #1")
    audit.record("run.cancel", actor=users["admin"], project=project, target="run #1")
    audit.record("member.add", project=project, target="olga")
    other = Project.objects.get(name="Other")
    audit.record("run.start", actor=users["ursula"], project=other, target="run #2")
    assert [e.action for e in audit.events(project=project)] == ["member.add", "run.cancel", "run.start"]  # newest first
    assert [e.action for e in audit.events(project=project, action="run")] == ["run.cancel", "run.start"]
    assert [e.target for e in audit.events(action="run.start")] == ["run #2", "run #1"]
    assert [e.action for e in audit.events(project=project, actor="admin")] == ["run.cancel"]
    assert [e.action for e in audit.events(project=project, actor="-")] == ["member.add"]
    assert audit.actors(project) == ["admin", "rita"]
    with pytest.raises(ValueError, match="unknown action 'runs'"):
        audit.events(action="runs")
