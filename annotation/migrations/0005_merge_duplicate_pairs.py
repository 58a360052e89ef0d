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


def _one_stands(model, history, groups: dict, pick, change) -> None:
    """In each group of rows of the copies (keyed by the kept pair first), the row ``pick`` chooses stands, moved to
    the kept pair; each other row is deleted, leaving a ``history`` row ``change(keep_id, old, stands)``."""
    changes, losers, moved = [], [], []
    for (keep_id, *_), rows in groups.items():
        stands, others = pick(rows)
        for old in others:
            changes.append(change(keep_id, old, stands))
            losers.append(old.id)
        if stands.pair_id != keep_id:
            stands.pair_id = keep_id
            moved.append(stands)
    model.objects.filter(pk__in=losers).delete()
    model.objects.bulk_update(moved, ["pair"], batch_size=500)
    history.objects.bulk_create(changes, batch_size=CHUNK)


def _merge_labels(apps, keep_of: dict[int, int]) -> None:
    """Per (kept pair, annotator) the latest label stands; the others become its history."""
    Label = apps.get_model("annotation", "Label")
    LabelChange = apps.get_model("annotation", "LabelChange")
    groups: dict[tuple[int, int], list] = {}
    for label in Label.objects.filter(pair_id__in=list(keep_of)).order_by("id"):
        groups.setdefault((keep_of[label.pair_id], label.annotator_id), []).append(label)

    def latest(labels: list) -> tuple:
        labels.sort(key=lambda lb: (lb.updated_at or lb.created_at, lb.created_at, lb.id))
        return labels[-1], labels[:-1]

    def change(keep_id: int, old, stands):
        return LabelChange(
            pair_id=keep_id, annotator_id=stands.annotator_id, label_id=stands.id, old_value=old.value,
            old_ratings=old.ratings or {}, old_comment=old.comment, old_at=old.created_at, new_value=stands.value,
            new_ratings=stands.ratings or {}, new_comment=stands.comment, source="merge")

    _one_stands(Label, LabelChange, groups, latest, change)


def _merge_assignments(apps, keep_of: dict[int, int]) -> None:
    """One assignment per (kept pair, annotator): done over open over skipped, then the latest."""
    Assignment = apps.get_model("annotation", "Assignment")
    groups: dict[tuple[int, int], list] = {}
    for a in Assignment.objects.filter(pair_id__in=list(keep_of)).order_by("id"):
        groups.setdefault((keep_of[a.pair_id], a.annotator_id), []).append(a)
    losers, moved = [], []
    for (keep_id, _), assignments in groups.items():
        assignments.sort(key=lambda a: (ASSIGNMENT_RANK.get(a.status, 9), -a.assigned_at.timestamp()))
        stays = assignments[0]
        losers += [a.id for a in assignments[1:]]
        is_test = any(a.is_test for a in assignments)
        if stays.pair_id != keep_id or stays.is_test != is_test:
            stays.pair_id, stays.is_test = keep_id, is_test
            moved.append(stays)
    Assignment.objects.filter(pk__in=losers).delete()
    Assignment.objects.bulk_update(moved, ["pair", "is_test"], batch_size=500)


def _merge_gold(apps, keep_of: dict[int, int]) -> None:
    """The strongest gold of the copies stands; the others become its history."""
    Adjudication = apps.get_model("annotation", "Adjudication")
    AdjudicationChange = apps.get_model("annotation", "AdjudicationChange")
    groups: dict[tuple[int], list] = {}
    for gold in Adjudication.objects.filter(pair_id__in=list(keep_of)):
        groups.setdefault((keep_of[gold.pair_id],), []).append(gold)

    def strongest(golds: list) -> tuple:
        golds.sort(key=lambda g: (PROVENANCE_RANK.get(g.provenance, 9), -g.created_at.timestamp()))
        return golds[0], golds[1:]

    def change(keep_id: int, old, stands):
        return AdjudicationChange(
            pair_id=keep_id, old_value=old.value, old_provenance=old.provenance, old_note=old.note,
            new_value=stands.value, new_provenance=stands.provenance, new_note=stands.note, action="merge")

    _one_stands(Adjudication, AdjudicationChange, groups, strongest, change)


def _merge_chunk(apps, members: list[list]) -> int:
    """Merge each group of copies (oldest first) into its oldest pair, in a constant number of queries."""
    Pair = apps.get_model("annotation", "CandidatePair")
    Prediction = apps.get_model("annotation", "Prediction")
    keep_of = {p.id: group[0].id for group in members for p in group}
    others = [pid for pid, keep in keep_of.items() if pid != keep]
    moved = []
    for prediction in Prediction.objects.filter(pair_id__in=others).only("id", "pair_id"):
        prediction.pair_id = keep_of[prediction.pair_id]
        moved.append(prediction)
    Prediction.objects.bulk_update(moved, ["pair"], batch_size=500)
    _merge_labels(apps, keep_of)
    _merge_assignments(apps, keep_of)
    _merge_gold(apps, keep_of)
    kept = []
    for group in members:
        keep = group[0]
        keep.origin = min((p.origin for p in group), key=lambda o: ORIGIN_RANK.get(o, 9))
        features = {}
        for p in group:  # oldest first: later runs' values win, nothing is dropped
            features.update(p.features or {})
        keep.features = features
        kept.append(keep)
    for start in range(0, len(others), CHUNK):
        Pair.objects.filter(pk__in=others[start:start + CHUNK]).delete()
    Pair.objects.bulk_update(kept, ["origin", "features"], batch_size=500)
    return len(others)


def _merge_duplicates(apps) -> int:
    Pair = apps.get_model("annotation", "CandidatePair")
    keys = ("complex_document_id", "simple_document_id", "complex_key", "simple_key")
    duplicated = (Pair.objects.values(*keys).annotate(n=Count("id")).filter(n__gt=1).order_by()
                  .values_list("complex_document_id", flat=True).distinct())
    documents = sorted(set(duplicated))
    merged = 0
    # a chunk of complex documents at a time: every copy of a pair shares its complex document
    for start in range(0, len(documents), 50):
        groups: dict[tuple, list] = {}
        for pair in (Pair.objects.filter(complex_document_id__in=documents[start:start + 50])
                     .only("id", "origin", "features", *keys).order_by("id")):
            groups.setdefault(tuple(getattr(pair, k) for k in keys), []).append(pair)
        merged += _merge_chunk(apps, [g for g in groups.values() if len(g) > 1])
    return merged


def _latest_predictions(apps) -> None:
    """The pair shows the prediction of the newest run that predicted it."""
    Pair = apps.get_model("annotation", "CandidatePair")
    Prediction = apps.get_model("annotation", "Prediction")
    multi = list(Prediction.objects.values("pair_id").annotate(n=Count("id")).filter(n__gt=1).order_by()
                 .values_list("pair_id", flat=True))
    for start in range(0, len(multi), CHUNK):
        latest = {}
        for pair_id, score, label in (Prediction.objects.filter(pair_id__in=multi[start:start + CHUNK])
                                      .order_by("pair_id", "run_id").values_list("pair_id", "score", "predicted_label")):
            latest[pair_id] = (score, label)
        Pair.objects.bulk_update([Pair(id=pid, score=score, predicted_label=label or "")
                                  for pid, (score, label) in latest.items()], ["score", "predicted_label"], batch_size=500)


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
