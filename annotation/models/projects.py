"""Projects, label schemes and membership (roles)."""
from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models


class LabelScheme(models.Model):
    """The labels annotators choose from. Four are built in (SPEC §6); researchers may add more.

    ``values`` is a list of ``{"value": str, "name": str, "key": str, "counts_as": "aligned"|"partial"|"not"}``;
    for Likert schemes ``kind="likert"``, ``values`` are the scale points and ``dimensions`` names the
    questions (simplicity, adequacy, fluency).
    """

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=100)
    # one of the registered scheme kinds (annotation/label_schemes/: a module per kind), checked by clean() and
    # the API's serializer, so adding a kind is adding its module: no choices here, no migration
    kind = models.CharField(max_length=20, help_text="a registered label-scheme kind (categorical, likert, ...)")
    values = models.JSONField()
    dimensions = models.JSONField(default=list, blank=True)
    builtin = models.BooleanField(default=False)

    def __str__(self) -> str:
        return self.name

    def value_names(self) -> list[str]:
        return [v["value"] for v in self.values]

    def clean(self) -> None:
        """Refuse a ``kind`` no module of ``annotation/label_schemes/`` registers (the message lists those that do)."""
        super().clean()
        try:
            self.kind_spec  # noqa: B018 - the lookup is the check
        except KeyError as exc:
            raise ValidationError({"kind": str(exc)}) from None

    @property
    def kind_spec(self):
        """The registered kind of this scheme (:mod:`annotation.label_schemes`): what templates ask."""
        from annotation.label_schemes import scheme_kind

        return scheme_kind(self)


class Project(models.Model):
    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    language = models.CharField(max_length=8, default="en", help_text="ISO 639-1 code used for sentence splitting")
    label_scheme = models.ForeignKey(LabelScheme, on_delete=models.PROTECT, related_name="projects")
    config = models.JSONField(default=dict, blank=True, help_text="QC, encoder and method settings")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, through="Membership", related_name="projects")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Role(models.TextChoices):
    RESEARCHER = "researcher", "Researcher"
    ANNOTATOR = "annotator", "Annotator"


class MembershipQuerySet(models.QuerySet):
    def excluded(self, project: Project) -> models.QuerySet:
        """The user ids of the project's members quality control excluded, as a subquery
        (``annotator_id__in=...``): no query of its own."""
        return self.filter(project=project, excluded_at__isnull=False).values("user_id")


class Membership(models.Model):
    """A user's role in one project. Site admins (``is_staff``) can do everything everywhere.

    ``excluded_at`` is set by quality control (``services.qc``) when the annotator's accuracy on
    hidden test questions falls below the project's threshold: their labels stop counting and the
    queue gives them no more items.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    excluded_at = models.DateTimeField(null=True, blank=True, help_text="set when quality control removed the annotator")
    exclusion_reason = models.CharField(max_length=300, blank=True)

    objects = MembershipQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "user"], name="one_membership_per_user")]

    def __str__(self) -> str:
        return f"{self.user} ({self.role}) in {self.project}"
