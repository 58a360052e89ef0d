"""A label scheme's ``kind`` is any kind a module of ``annotation/label_schemes/`` registers (checked by
``LabelScheme.clean`` and the API's serializer): the column keeps no choices, so a new kind needs no migration."""
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotation", "0010_run_chunks")]
    operations = [migrations.AlterField("labelscheme", "kind", models.CharField(
        max_length=20, help_text="a registered label-scheme kind (categorical, likert, ...)"))]
