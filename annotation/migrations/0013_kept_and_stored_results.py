"""Issue 37 at a million pairs: figures kept per data state (``KeptAggregate``: the dashboard's, a run's scores, the
training summary), a stored comparison of two finished runs (``RunComparison``) and the gold export preview's stored
per-article parts and last answer per options (``PreviewPart``, ``PreviewAnswer``)."""
import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


def _id() -> tuple:
    return "id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")


def _to(name: str, model: str) -> tuple:
    return name, models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to=f"annotation.{model}")


def _key(*names: str) -> list[tuple]:
    return [(name, models.CharField(max_length=64)) for name in names]


def _one(name: str, *fields: str) -> models.UniqueConstraint:
    return models.UniqueConstraint(fields=fields, name=name)


class Migration(migrations.Migration):
    dependencies = [("annotation", "0012_queue_frontier")]

    operations = [
        migrations.CreateModel("KeptAggregate", [
            _id(), ("name", models.CharField(max_length=200)), *_key("state"), ("value", models.JSONField()),
            ("computed_at", models.DateTimeField(default=django.utils.timezone.now)),
            ("seconds", models.FloatField(default=0.0, help_text="how long the computation took")), _to("project", "project"),
        ], options={"constraints": [_one("kept_aggregate_one_per_name", "project", "name")]}),
        migrations.CreateModel("RunComparison", [
            _id(), *_key("state"), ("summary", models.JSONField(default=dict)), ("articles", models.JSONField(default=list)),
            ("seconds", models.FloatField(default=0.0, help_text="how long computing it took")),
            ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
            _to("new", "alignmentrun"), _to("old", "alignmentrun"),
        ], options={"constraints": [_one("one_comparison_per_run_pair", "old", "new")]}),
        migrations.CreateModel("PreviewPart", [
            _id(), *_key("options", "key", "mark"), ("part", models.JSONField(default=dict)),
            _to("article", "article"), _to("project", "project"),
        ], options={"indexes": [models.Index(fields=["project", "options"], name="preview_part_options_idx")],
                    "constraints": [_one("one_preview_part_per_options", "article", "options")]}),
        migrations.CreateModel("PreviewAnswer", [
            _id(), *_key("options", "state"), ("answer", models.JSONField(default=dict)), _to("project", "project"),
        ], options={"constraints": [_one("one_preview_answer_per_options", "project", "options")]}),
    ]
