from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import AlignmentRun, CandidatePair, Status
from tests import factories
from tests.annotation.commands.cases import STRICT_JSON


@pytest.fixture
def corpus(project):
    factories.make_article(project, "Bees", {
        "adv": [["Bee populations have declined sharply across Europe.", "Researchers blame pesticides."]],
        "ele": [["Bee populations have declined in Europe."]],
    })
    return project


def test_align_now_runs_in_process_and_prints_a_summary(corpus):
    out = StringIO()
    call_command("align", corpus.name, "--method", "jaccard", "--now", stdout=out)
    run = AlignmentRun.objects.get()
    assert run.status == Status.SUCCEEDED
    assert f"alignment run #{run.pk} (jaccard) succeeded: {run.pair_count} pairs" in out.getvalue()
    assert CandidatePair.objects.filter(predictions__run=run).count() == run.pair_count >= 1


def test_align_without_now_only_queues(corpus):
    out = StringIO()
    call_command("align", str(corpus.pk), "--method", "tfidf", "--levels", "adv:ele", stdout=out)
    run = AlignmentRun.objects.get()
    assert run.status == Status.QUEUED and run.level_pairs == [["adv", "ele"]]
    assert "queued alignment run" in out.getvalue()


@pytest.mark.parametrize("args,message", [
    (["Nope"], "project 'Nope' not found"),
    (["Newsela sample", "--method", "magic"], "unknown method 'magic'"),
    (["Newsela sample", "--params", "{bad"], "Expecting property name"),
    (["Newsela sample", "--levels", "adv"], "COMPLEX:SIMPLE"),
])
def test_align_reports_bad_arguments_clearly(corpus, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("align", *args)


@pytest.mark.parametrize("params,message", STRICT_JSON)
def test_align_refuses_params_that_cannot_be_stored_and_starts_nothing(corpus, params, message):
    with pytest.raises(CommandError) as caught:
        call_command("align", corpus.name, "--method", "jaccard", "--params", params, stdout=StringIO())
    assert str(caught.value).startswith(message.format(opt="--params"))
    assert not AlignmentRun.objects.exists()


def test_align_refuses_a_level_that_cannot_be_stored(corpus):
    with pytest.raises(CommandError, match=r"^--levels\[0\]\[1\]: is not valid Unicode"):
        call_command("align", corpus.name, "--levels", "adv:\udcff", stdout=StringIO())
    assert not AlignmentRun.objects.exists()
