"""Issue 37 at a million pairs: a stored comparison of two finished runs (``run_comparison.compare``) and the
stored per-article parts of the gold export preview and its last answer per options (``export/preview_parts.py``)."""
import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0013_kept_aggregates"),
    ]

    operations = [
        migrations.CreateModel(
            name="RunComparison",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("state", models.CharField(max_length=64)),
                ("summary", models.JSONField(default=dict)),
                ("articles", models.JSONField(default=list)),
                ("seconds", models.FloatField(default=0.0, help_text="how long computing it took")),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("new", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                          to="annotation.alignmentrun")),
                ("old", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                          to="annotation.alignmentrun")),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("old", "new"), name="one_comparison_per_run_pair")],
            },
        ),
        migrations.CreateModel(
            name="PreviewPart",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("options", models.CharField(max_length=64)),
                ("key", models.CharField(max_length=64)),
                ("mark", models.CharField(max_length=64)),
                ("part", models.JSONField(default=dict)),
                ("article", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                              to="annotation.article")),
                ("project", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                              to="annotation.project")),
            ],
            options={
                "indexes": [models.Index(fields=["project", "options"], name="preview_part_options_idx")],
                "constraints": [models.UniqueConstraint(fields=("article", "options"), name="one_preview_part_per_options")],
            },
        ),
        migrations.CreateModel(
            name="PreviewAnswer",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("options", models.CharField(max_length=64)),
                ("state", models.CharField(max_length=64)),
                ("answer", models.JSONField(default=dict)),
                ("project", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                              to="annotation.project")),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("project", "options"), name="one_preview_answer_per_options")],
            },
        ),
    ]
