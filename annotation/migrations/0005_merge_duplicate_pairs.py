"""Data migration: one sentence pair per (documents, sentence sets), predictions per run.

Before this, every run had its own copy of a sentence pair, and labels hung off the copy. Here:

1. every pair that belonged to a run gets a ``Prediction`` of that run (score, label, features);
2. copies of the same sentence pair are merged into the oldest one. Nothing is lost: labels,
   assignments and gold move over; when one annotator labelled two copies, the later label stands
   and the other becomes a ``LabelChange`` (source ``merge``) of it; when two copies had gold, the
   strongest (adjudicated > imported > majority > single, then the later) stands and the other is
   recorded as an ``AdjudicationChange``;
3. the pair shows its latest run's prediction, and pairs whose two sides are the same text after
   normalisation are marked ``identical``.
"""
from django.db import migrations
from django.db.models import Count

CHUNK = 2000
ORIGIN_RANK = {"import": 0, "model": 1, "candidate": 2, "mined": 3, "manual": 4, "derived": 5}
PROVENANCE_RANK = {"adjudicated": 0, "imported": 1, "majority": 2, "single": 3}
ASSIGNMENT_RANK = {"done": 0, "open": 1, "skipped": 2}


def _create_predictions(apps) -> None:
    Pair = apps.get_model("annotation", "CandidatePair")
    Prediction = apps.get_model("annotation", "Prediction")
    rows = (Pair.objects.filter(run__isnull=False).order_by("id")
            .values_list("id", "run_id", "score", "predicted_label", "features", "created_at"))
    batch = []
    for pair_id, run_id, score, label, features, created in rows.iterator(chunk_size=CHUNK):
        batch.append(Prediction(run_id=run_id, pair_id=pair_id, score=score, predicted_label=label or "",
                                features=features or {}, created_at=created))
        if len(batch) >= CHUNK:
            Prediction.objects.bulk_create(batch, ignore_conflicts=True)
            batch = []
    Prediction.objects.bulk_create(batch, ignore_conflicts=True)


def _merge_labels(apps, keep_id: int, ids: list[int]) -> None:
    Label = apps.get_model("annotation", "Label")
    LabelChange = apps.get_model("annotation", "LabelChange")
    by_annotator: dict[int, list] = {}
    for label in Label.objects.filter(pair_id__in=ids).order_by("id"):
        by_annotator.setdefault(label.annotator_id, []).append(label)
    for annotator_id, labels in by_annotator.items():
        labels.sort(key=lambda lb: (lb.updated_at or lb.created_at, lb.created_at, lb.id))
        stands, folded = labels[-1], labels[:-1]
        for old in folded:
            LabelChange.objects.create(
                pair_id=keep_id, annotator_id=annotator_id, changed_by=None, label_id=stands.id,
                old_value=old.value, old_ratings=old.ratings or {}, old_comment=old.comment, old_at=old.created_at,
                new_value=stands.value, new_ratings=stands.ratings or {}, new_comment=stands.comment, source="merge")
            old.delete()
        if stands.pair_id != keep_id:
            Label.objects.filter(pk=stands.pk).update(pair_id=keep_id)


def _merge_assignments(apps, keep_id: int, ids: list[int]) -> None:
    Assignment = apps.get_model("annotation", "Assignment")
    by_annotator: dict[int, list] = {}
    for a in Assignment.objects.filter(pair_id__in=ids).order_by("id"):
        by_annotator.setdefault(a.annotator_id, []).append(a)
    for assignments in by_annotator.values():
        assignments.sort(key=lambda a: (ASSIGNMENT_RANK.get(a.status, 9), -a.assigned_at.timestamp()))
        stays, rest = assignments[0], assignments[1:]
        is_test = any(a.is_test for a in assignments)
        Assignment.objects.filter(pk__in=[a.pk for a in rest]).delete()
        Assignment.objects.filter(pk=stays.pk).update(pair_id=keep_id, is_test=is_test)


def _merge_gold(apps, keep_id: int, ids: list[int]) -> None:
    Adjudication = apps.get_model("annotation", "Adjudication")
    AdjudicationChange = apps.get_model("annotation", "AdjudicationChange")
    golds = sorted(Adjudication.objects.filter(pair_id__in=ids),
                   key=lambda g: (PROVENANCE_RANK.get(g.provenance, 9), -g.created_at.timestamp()))
    if not golds:
        return
    stands, folded = golds[0], golds[1:]
    for old in folded:
        AdjudicationChange.objects.create(
            pair_id=keep_id, old_value=old.value, old_provenance=old.provenance, old_note=old.note,
            new_value=stands.value, new_provenance=stands.provenance, new_note=stands.note, action="merge")
        old.delete()
    if stands.pair_id != keep_id:
        Adjudication.objects.filter(pk=stands.pk).update(pair_id=keep_id)


def _merge_duplicates(apps) -> int:
    Pair = apps.get_model("annotation", "CandidatePair")
    Prediction = apps.get_model("annotation", "Prediction")
    keys = ("complex_document_id", "simple_document_id", "complex_key", "simple_key")
    groups = (Pair.objects.values(*keys).annotate(n=Count("id")).filter(n__gt=1).order_by())
    merged = 0
    for group in list(groups):
        members = list(Pair.objects.filter(**{k: group[k] for k in keys}).order_by("id"))
        keep, others = members[0], members[1:]
        ids = [p.id for p in members]
        other_ids = [p.id for p in others]
        Prediction.objects.filter(pair_id__in=other_ids).update(pair_id=keep.id)
        _merge_labels(apps, keep.id, ids)
        _merge_assignments(apps, keep.id, ids)
        _merge_gold(apps, keep.id, ids)
        origin = min((p.origin for p in members), key=lambda o: ORIGIN_RANK.get(o, 9))
        features = {}
        for p in members:  # oldest first: later runs' values win, nothing is dropped
            features.update(p.features or {})
        Pair.objects.filter(pk__in=other_ids).delete()
        Pair.objects.filter(pk=keep.id).update(origin=origin, features=features)
        merged += len(other_ids)
    return merged


def _latest_predictions(apps) -> None:
    """The pair shows the prediction of the newest run that predicted it."""
    Pair = apps.get_model("annotation", "CandidatePair")
    Prediction = apps.get_model("annotation", "Prediction")
    multi = (Prediction.objects.values("pair_id").annotate(n=Count("id")).filter(n__gt=1).order_by()
             .values_list("pair_id", flat=True))
    for pair_id in list(multi):
        latest = Prediction.objects.filter(pair_id=pair_id).order_by("-run_id").first()
        Pair.objects.filter(pk=pair_id).update(score=latest.score, predicted_label=latest.predicted_label)


def _normalise(text: str) -> str:
    import unicodedata

    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join("".join(" " if unicodedata.category(c).startswith("P") else c for c in folded).split())


def _mark_identical(apps) -> None:
    Pair = apps.get_model("annotation", "CandidatePair")
    PairSentence = apps.get_model("annotation", "PairSentence")
    last = 0
    while True:
        ids = list(Pair.objects.filter(id__gt=last).order_by("id").values_list("id", flat=True)[:CHUNK])
        if not ids:
            return
        texts: dict[tuple[int, str], list[tuple[int, str]]] = {}
        for pair_id, side, index, text in (PairSentence.objects.filter(pair_id__in=ids)
                                           .values_list("pair_id", "side", "sentence__index", "sentence__text")):
            texts.setdefault((pair_id, side), []).append((index, text))
        same = [i for i in ids
                if texts.get((i, "complex")) and texts.get((i, "simple"))
                and _normalise(" ".join(t for _, t in sorted(texts[(i, "complex")])))
                == _normalise(" ".join(t for _, t in sorted(texts[(i, "simple")])))]
        Pair.objects.filter(pk__in=same).update(identical=True)
        last = ids[-1]


def forwards(apps, schema_editor) -> None:
    _create_predictions(apps)
    _merge_duplicates(apps)
    _latest_predictions(apps)
    _mark_identical(apps)


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0004_sentence_pairs_and_history"),
    ]

    operations = [
        migrations.RunPython(forwards, migrations.RunPython.noop, elidable=False),
    ]
