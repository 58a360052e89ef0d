"""Per-link labels in the whole-article view (issue 18).

The whole-article view used to store one label for an n:m group of links (a sentence could be in one
link only). Now every complex–simple link carries its own label on its 1:1 sentence pair. This data
migration turns each whole-article label (``source="article"``) on an n:m pair into per-link labels:

* every complex × simple link of the group gets the annotator's label on its 1:1 pair (the pair is
  reused when it exists, else created with origin ``manual`` and its sentence rows), with the
  group's value, the group label's comment and an equal share of its seconds (so summed times do
  not grow); a ``LabelChange`` (source ``migration``, "" → value) records it. Where the annotator
  already labelled that 1:1 pair, their own label stays (it is the more specific judgement);
* the group label itself is deleted, its content kept in a ``LabelChange`` (source ``migration``,
  value → ""), so it no longer counts in gold or agreement (no double counting); when that leaves
  the n:m pair without any label, its automatic gold (single/majority) goes too, recorded as an
  ``AdjudicationChange`` (action ``migration``). Adjudicated and imported gold are never touched.

Queue labels of n:m candidates are not touched: the queue explains that such a label counts for
each link of the group. Reversing the migration is not supported (the per-link labels may differ
within a former group).
"""
from __future__ import annotations

import uuid

from django.db import migrations, models

SOURCE = "migration"


def _key(indices) -> str:
    return ",".join(str(i) for i in sorted(set(indices)))


def _indices(key: str) -> list[int]:
    return [int(i) for i in key.split(",") if i]


def split_group_labels(apps, schema_editor):
    Label = apps.get_model("annotation", "Label")
    LabelChange = apps.get_model("annotation", "LabelChange")
    Pair = apps.get_model("annotation", "CandidatePair")
    PairSentence = apps.get_model("annotation", "PairSentence")
    Sentence = apps.get_model("annotation", "Sentence")
    Adjudication = apps.get_model("annotation", "Adjudication")
    AdjudicationChange = apps.get_model("annotation", "AdjudicationChange")

    group_labels = [label for label in Label.objects.filter(source="article").select_related("pair").order_by("pk")
                    if "," in label.pair.complex_key or "," in label.pair.simple_key]
    emptied: set[int] = set()
    for group in group_labels:
        pair = group.pair
        complex_indices, simple_indices = _indices(pair.complex_key), _indices(pair.simple_key)
        links = [(c, s) for c in complex_indices for s in simple_indices]
        share = (group.seconds or 0.0) / len(links)
        for c, s in links:
            one, created = Pair.objects.get_or_create(
                complex_document_id=pair.complex_document_id, simple_document_id=pair.simple_document_id,
                complex_key=_key([c]), simple_key=_key([s]),
                defaults={"article_id": pair.article_id, "origin": "manual"})
            if created:
                for doc_id, index, side in ((pair.complex_document_id, c, "complex"), (pair.simple_document_id, s, "simple")):
                    sentence = Sentence.objects.filter(document_id=doc_id, index=index).first()
                    if sentence is not None:
                        PairSentence.objects.get_or_create(pair=one, sentence=sentence, defaults={"side": side})
            if Label.objects.filter(pair=one, annotator_id=group.annotator_id).exists():
                continue  # the annotator's own judgement of this link stands
            label = Label.objects.create(
                pair=one, annotator_id=group.annotator_id, value=group.value, ratings=group.ratings or {},
                comment=group.comment, seconds=share, source="article", client_token=uuid.uuid4(),
                created_at=group.created_at)
            LabelChange.objects.create(
                pair=one, annotator_id=group.annotator_id, changed_by=None, label=label, old_value="", old_ratings={},
                old_comment="", old_at=None, new_value=group.value, new_ratings=group.ratings or {},
                new_comment=group.comment, source=SOURCE)
        LabelChange.objects.create(
            pair=pair, annotator_id=group.annotator_id, changed_by=None, label=None, old_value=group.value,
            old_ratings=group.ratings or {}, old_comment=group.comment, old_at=group.updated_at, new_value="",
            new_ratings={}, new_comment="", source=SOURCE)
        group.delete()
        emptied.add(pair.pk)
    for pair_id in sorted(emptied):
        if Label.objects.filter(pair_id=pair_id).exists():
            continue
        for gold in Adjudication.objects.filter(pair_id=pair_id, provenance__in=("single", "majority")):
            AdjudicationChange.objects.create(
                pair_id=pair_id, old_value=gold.value, old_provenance=gold.provenance, old_note=gold.note,
                new_value="", new_provenance="", new_note="", action=SOURCE)
            gold.delete()


class Migration(migrations.Migration):

    dependencies = [("annotation", "0008_liveness_and_audit")]

    operations = [
        migrations.AlterField(
            model_name="labelchange",
            name="source",
            field=models.CharField(choices=[("queue", "queue"), ("api", "api"), ("article", "article"),
                                            ("my-labels", "my-labels"), ("undo", "undo"), ("merge", "merge"),
                                            ("migration", "migration")], max_length=20),
        ),
        migrations.RunPython(split_group_labels, migrations.RunPython.noop),
    ]
