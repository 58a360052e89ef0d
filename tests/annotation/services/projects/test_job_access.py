"""Checks at run time, not only at queue time (issue 19 item 10): a job queued by a member who then
loses access — removed from a project the job reads, from the job's own project, or deactivated —
fails with "you no longer have access to project X" and reads nothing; the services' run functions
are called directly, as the worker calls them."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, CandidatePair, Export, Job, Membership, Split, Status, indices_key
from annotation.services.corpus.importing import import_files
from annotation.services.export import ExportOptions, run_export_job, start_export
from annotation.services.projects import job_access
from annotation.services.scoring import jobs as scoring
from annotation.services.settings.project_settings import remove_member
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(project, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    article = factories.make_article(project, "a0", {"0": [["Complex one here."]], "1": [["Simple one."]]})
    docs = {d.level: d for d in article.documents.all()}
    pair = CandidatePair.objects.create(article=article, complex_document=docs["0"], simple_document=docs["1"],
                                        complex_key=indices_key([0]), simple_key=indices_key([0]))
    Adjudication.objects.create(pair=pair, value="aligned", provenance="adjudicated")
    return project


@pytest.fixture
def evaluation(users):
    """The "Turk" evaluation project: rita and ursula research it (so rita can be removed)."""
    turk = factories.make_project("Turk", rita="researcher", ursula="researcher")
    article = factories.make_article(turk, "t1", {"orig": [["Complex one here."]], "simp": [["Simple one."]]})
    Split.objects.create(article=article, name="test")
    return turk


def queue_export(project, user, evaluation) -> Export:
    options = ExportOptions(formats=["jsonl"], derived=False, dedup=[{"project": evaluation.pk, "splits": ["test"]}])
    return start_export(project, options, user=user)


def removed(project, username: str) -> None:
    remove_member(project, Membership.objects.get(project=project, user__username=username).pk)


def failed_with(job_id: int, run, words: str) -> Job:
    with pytest.raises(job_access.AccessLost):
        run(job_id)
    job = Job.objects.get(pk=job_id)
    assert job.status == Status.FAILED and words in job.error, job.error
    return job


def test_an_export_still_runs_while_its_creator_has_access(corpus, users, evaluation):
    export = queue_export(corpus, users["rita"], evaluation)
    run_export_job(export.job_id)
    export.refresh_from_db()
    assert export.job.status == Status.SUCCEEDED and export.manifest["dropped"]["evaluation_set"] == 1


def test_an_export_fails_once_its_creator_is_removed_from_the_dedup_project(corpus, users, evaluation):
    export = queue_export(corpus, users["rita"], evaluation)
    removed(evaluation, "rita")
    failed_with(export.job_id, run_export_job, "you no longer have access to project 'Turk'")
    export.refresh_from_db()
    assert not export.archive and not export.manifest


def test_an_export_fails_once_its_creator_is_removed_from_the_project_or_deactivated(corpus, users, evaluation):
    first = queue_export(corpus, users["rita"], evaluation)
    factories.make_user("rachel")
    Membership.objects.create(project=corpus, user=users["rita"].__class__.objects.get(username="rachel"),
                              role="researcher")
    removed(corpus, "rita")
    failed_with(first.job_id, run_export_job, "you no longer have access to project 'Newsela sample'")
    rachel = users["rita"].__class__.objects.get(username="rachel")
    Membership.objects.create(project=evaluation, user=rachel, role="researcher")
    second = queue_export(corpus, rachel, evaluation)
    rachel.is_active = False
    rachel.save(update_fields=["is_active"])
    failed_with(second.job_id, run_export_job, "is deactivated")


@pytest.fixture
def reference(users):
    """A reference pair corpus rita and ursula research."""
    ref = factories.make_project("Ref", rita="researcher", ursula="researcher")
    import_files(ref, [("r.src", b"The cat was seen by the dog.\n"), ("r.dst", b"The dog saw the cat.\n")], "parallel")
    return ref


def test_a_scoring_job_fails_once_its_creator_loses_the_reference_project(project, users, reference):
    from annotation.permissions import visible_projects

    request = scoring.parse_request(project, "sum4simp-filter", {"reference_project": reference.name},
                                    visible=visible_projects(users["rita"]))
    job = scoring.start_scoring(project, request, user=users["rita"], enqueue=False)
    removed(reference, "rita")
    failed_with(job.pk, scoring.run_scoring_job, "you no longer have access to project 'Ref'")


def test_a_scoring_job_fails_once_its_creator_is_removed_from_the_project(project, users):
    factories.make_user("rachel")
    job = scoring.start_scoring(project, scoring.parse_request(project, "pivot-select"), user=users["rita"], enqueue=False)
    Membership.objects.create(project=project, user=users["rita"].__class__.objects.get(username="rachel"),
                              role="researcher")
    removed(project, "rita")
    failed_with(job.pk, scoring.run_scoring_job, "you no longer have access to project 'Newsela sample'")


def test_a_job_from_the_command_line_is_not_limited(project):
    job_access.check(None, project, [project.pk])
