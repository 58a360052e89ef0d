from django.apps import AppConfig
from django.db.models.signals import post_migrate


def ensure_builtin_schemes(sender=None, using: str = "default", **kwargs) -> None:
    """Create or refresh the built-in label schemes. Runs after every migrate (and after a test
    database flush, which emits post_migrate too), so they always exist."""
    from annotation.label_schemes import BUILTIN_SCHEMES
    from annotation.models import LabelScheme

    for spec in BUILTIN_SCHEMES:
        LabelScheme.objects.using(using).update_or_create(
            slug=spec["slug"],
            defaults={"name": spec["name"], "kind": spec["kind"], "values": spec["values"],
                      "dimensions": spec.get("dimensions", []), "builtin": True},
        )


def ensure_cache_table(sender=None, using: str = "default", **kwargs) -> None:
    """Create the database cache's table (the sign-in limits without Redis) after every migrate;
    ``createcachetable`` skips a table that exists."""
    from django.core.management import call_command

    call_command("createcachetable", database=using, verbosity=0)


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Alignment annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        post_migrate.connect(ensure_builtin_schemes, sender=self)
        post_migrate.connect(ensure_cache_table, sender=self, dispatch_uid="ensure-cache-table")
        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_save, pre_delete

        from annotation.services.projects.accounts import (
            end_access_of_inactive,
            end_access_of_removed,
            revoke_on_password_change,
        )

        # a new password revokes the user's API token, wherever it was changed
        post_save.connect(revoke_on_password_change, sender=get_user_model(), dispatch_uid="revoke-token-on-password")
        # deactivation or removal ends the user's sessions (and token) for good
        post_save.connect(end_access_of_inactive, sender=get_user_model(), dispatch_uid="end-access-of-inactive")
        pre_delete.connect(end_access_of_removed, sender=get_user_model(), dispatch_uid="end-access-of-removed")
