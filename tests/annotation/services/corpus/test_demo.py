"""The demo installation (``corpus/demo.py``): accounts, memberships and the demo corpus imported once, and
refused in production."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Article, Membership
from annotation.permissions import RESEARCHERS_GROUP
from annotation.services.corpus import demo

pytestmark = pytest.mark.django_db


def test_the_demo_is_created_once_and_a_second_call_changes_nothing():
    project, created = demo.ensure_demo()
    assert created and project.name == demo.DEMO_PROJECT
    articles = Article.objects.filter(project=project).count()
    assert articles == len({p.name.rsplit("-", 1)[0] for p in demo.DEMO_CORPUS.glob("*.txt")})
    roles = dict(Membership.objects.filter(project=project).values_list("user__username", "role"))
    assert roles == {"researcher": "researcher", "annotator": "annotator", "annotator2": "annotator"}
    users = get_user_model().objects
    assert users.get(username="admin").is_superuser and not users.get(username="annotator").is_staff
    assert users.get(username="researcher").groups.filter(name=RESEARCHERS_GROUP).exists()
    assert users.get(username="annotator").check_password("annotator")

    users.filter(username="annotator").update(password="changed")
    again, created = demo.ensure_demo()
    assert again == project and not created and Article.objects.filter(project=project).count() == articles
    assert users.get(username="annotator").password == "changed"  # an existing account keeps its password


def test_the_demo_refuses_to_run_in_production(settings):
    settings.PRODUCTION = True
    with pytest.raises(demo.DemoRefused, match="ALIGNAPP_ENV=production"):
        demo.ensure_demo()
    assert not get_user_model().objects.filter(username="admin").exists()
