from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import CandidatePair, Job, Status
from annotation.services.corpus.importing import import_files
from tests import factories
from tests.annotation.commands.cases import STRICT_JSON

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(project):
    import_files(project, [("pivot.src", b"The feline reposed upon the rug.\nThe cat lay on the rug.\n"),
                           ("pivot.dst", b"The cat lay on the rug.\nThe cat lay on the rug.\n")], "parallel")
    return project


def test_score_pairs_now_runs_in_process_and_prints_a_summary(corpus):
    out = StringIO()
    call_command("score_pairs", corpus.name, "--kind", "pivot-select", "--now", stdout=out)
    job = Job.objects.get()
    assert job.status == Status.SUCCEEDED and job.result["counts"]["kept"] == 1
    assert f"pivot-select job #{job.pk} succeeded" in out.getvalue() and '"pass_rate": 0.5' in out.getvalue()
    assert sorted(CandidatePair.objects.values_list("features__pivot_keep", flat=True)) == [0.0, 1.0]


def test_score_pairs_without_now_only_queues(corpus):
    out = StringIO()
    call_command("score_pairs", str(corpus.pk), "--kind", "access-attributes", "--params", '{"parser": null}', stdout=out)
    assert Job.objects.get().status == Status.QUEUED and "queued access-attributes job" in out.getvalue()


def test_the_reference_project_option_is_passed_by_name(corpus, users):
    ref = factories.make_project("Reference", rita="researcher")
    with pytest.raises(CommandError, match="reference project 'Reference' has no imported pairs"):
        call_command("score_pairs", corpus.name, "--kind", "sum4simp-filter", "--reference-project", ref.name)


@pytest.mark.parametrize("args,message", [
    (["Nope", "--kind", "pivot-select"], "project 'Nope' not found"),
    (["Newsela sample", "--kind", "pivot-select", "--params", "[1]"], "--params: must be a JSON object, not an array"),
    (["Newsela sample", "--kind", "gain-classifier"], "needs reference_project"),
])
def test_bad_arguments_are_command_errors(corpus, args, message):
    with pytest.raises(CommandError, match=message.replace("[", r"\[")):
        call_command("score_pairs", *args)


@pytest.mark.parametrize("params,message", STRICT_JSON)
def test_score_pairs_refuses_params_that_cannot_be_stored_and_queues_nothing(corpus, params, message):
    with pytest.raises(CommandError) as caught:
        call_command("score_pairs", corpus.name, "--kind", "pivot-select", "--params", params, stdout=StringIO())
    assert str(caught.value).startswith(message.format(opt="--params"))
    assert not Job.objects.exists()


def test_score_pairs_refuses_a_project_name_that_cannot_be_stored_in_the_params(corpus):
    with pytest.raises(CommandError, match=r"^--params\.reference_project: is not valid Unicode"):
        call_command("score_pairs", corpus.name, "--kind", "gain-classifier", "--reference-project", "x\udcff")
    assert not Job.objects.exists()
