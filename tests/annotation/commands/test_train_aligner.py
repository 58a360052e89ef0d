"""``manage.py train_aligner``: its --config is JSON held to the API's rules (training itself is
tested in tests/annotation/services/training and tests/engine)."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Job
from tests.annotation.commands.cases import STRICT_JSON

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("config,message", STRICT_JSON)
def test_train_aligner_refuses_a_config_that_cannot_be_stored_and_queues_nothing(project, config, message):
    with pytest.raises(CommandError) as caught:
        call_command("train_aligner", project.name, "--config", config, stdout=StringIO())
    assert str(caught.value).startswith(message.format(opt="--config"))
    assert not Job.objects.exists()


def test_train_aligner_names_an_unknown_project(project):
    with pytest.raises(CommandError, match="project 'Nope' not found"):
        call_command("train_aligner", "Nope", stdout=StringIO())
