"""Creating a project (``projects.creation``): its creator its first researcher, audited; every bad field
refused with nothing created; the researcher a management command's project gets."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from annotation.models import AuditEvent, Membership, Project, Role
from annotation.permissions import RESEARCHERS_GROUP
from annotation.services.projects import creation

pytestmark = pytest.mark.django_db


def test_the_creator_is_the_first_researcher_and_the_creation_audited(users):
    project = creation.create_project(users["rita"], name="  Wiki  ", language="en", label_scheme="aligned-partial-not",
                                      guidelines="Link **every** pair.\r\n", description=" d ")
    assert (project.name, project.description, project.created_by) == ("Wiki", "d", users["rita"])
    assert Membership.objects.get(project=project).role == Role.RESEARCHER
    assert AuditEvent.objects.filter(action="project.create", project=project).count() == 1


@pytest.mark.parametrize("fields,message", [
    ({"name": "  "}, "Enter a name"),
    ({"name": "x" * 201}, "The name is too long"),
    ({"name": "newsela sample"}, "exists already"),  # the conftest project, another case
    ({"language": "xx"}, "Unsupported language 'xx'"),
    ({"label_scheme": "nope"}, "Unknown label scheme 'nope'"),
    ({"encoder": "/etc/passwd"}, "a path under the model roots"),
    ({"guidelines": "g" * 50_001}, "Guidelines can be at most"),
])
def test_a_bad_field_is_refused_and_nothing_is_created(users, project, fields, message):
    before = Project.objects.count()
    with pytest.raises(creation.ProjectError, match=message):
        creation.create_project(users["rita"], **{"name": "New", "language": "en",
                                                  "label_scheme": "aligned-partial-not", **fields})
    assert Project.objects.count() == before


def test_a_commands_project_goes_to_the_named_or_the_only_researcher(users):
    assert creation.command_researcher("anna") == users["anna"]
    with pytest.raises(ValueError, match="no active account named 'ghost'"):
        creation.command_researcher("ghost")
    group, _ = Group.objects.get_or_create(name=RESEARCHERS_GROUP)
    group.user_set.clear()
    assert creation.command_researcher() is None
    group.user_set.add(users["rita"])
    assert creation.command_researcher() == users["rita"]
    group.user_set.add(users["ursula"])
    assert creation.command_researcher() is None  # two: nobody is picked
