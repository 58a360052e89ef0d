"""The demo installation: accounts, one project per demo corpus, imported on first run."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from annotation.models import LabelScheme, Membership, Project, Role
from annotation.permissions import RESEARCHERS_GROUP
from annotation.services.corpus import importing

DEMO_CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "demo_corpus"
DEMO_PROJECT = "Demo: news at three levels"


@dataclass(frozen=True)
class DemoAccount:
    username: str
    password: str
    role: str


DEMO_ACCOUNTS = (
    DemoAccount("admin", "admin", "admin"),
    DemoAccount("researcher", "researcher", Role.RESEARCHER),
    DemoAccount("annotator", "annotator", Role.ANNOTATOR),
    DemoAccount("annotator2", "annotator2", Role.ANNOTATOR),
)


class DemoRefused(RuntimeError):
    """The demo accounts' passwords are public: never in production."""


@transaction.atomic
def ensure_demo() -> tuple[Project, bool]:
    """Create the demo accounts and project and import the demo corpus, once. Returns (project, created).

    Raises:
        DemoRefused: with ``ALIGNAPP_ENV=production``.
    """
    if settings.PRODUCTION:
        raise DemoRefused("the demo refuses to run with ALIGNAPP_ENV=production: its accounts (admin/admin, …) have "
                          "public passwords; create real accounts with `manage.py createsuperuser`")
    User = get_user_model()
    researchers, _ = Group.objects.get_or_create(name=RESEARCHERS_GROUP)
    users = {}
    for account in DEMO_ACCOUNTS:
        user, created = User.objects.get_or_create(username=account.username)
        if created:
            user.set_password(account.password)
            user.is_staff = user.is_superuser = account.role == "admin"
            user.save()
        if account.role == Role.RESEARCHER:
            user.groups.add(researchers)
        users[account.username] = user
    project, created = Project.objects.get_or_create(
        name=DEMO_PROJECT,
        defaults={"language": "en", "label_scheme": LabelScheme.objects.get(slug="aligned-partial-not"),
                  "description": "Original demo articles written for alignapp, each at an advanced, intermediate and elementary level."},
    )
    for account in DEMO_ACCOUNTS:
        if account.role != "admin":
            Membership.objects.get_or_create(project=project, user=users[account.username], defaults={"role": account.role})
    if created:
        importing.import_files(project, importing.read_path(DEMO_CORPUS), "levels", source="demo corpus")
    return project, created
