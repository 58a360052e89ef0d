"""What every scoring job kind shares: the pairs a job scores, writing features batch by batch,
a reference project's texts, saving a fitted model as a ``ModelVersion``, annotated classes.

A kind owns its feature-key prefix (its ``ScoringKind.prefix``): re-running it first removes the keys of that
prefix and then writes the new values (batch-wise, under a row lock), so re-delivery or a re-run
leaves the same state. Flags are stored as 1.0/0.0 so every attribute filters and sorts numerically.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

from django.conf import settings
from django.db import transaction

from annotation.models import CandidatePair, Job, ModelVersion, Prediction, Project
from annotation.services.corpus.documents import pair_sentences, pair_texts
from workers.engine import normalise

ProgressFn = Callable[[float, str], None]

BATCH = 500


def target_pairs(project: Project, params: dict):
    """The pairs a job scores: the project's, or one run's, optionally of one origin."""
    qs = CandidatePair.objects.filter(article__project=project)
    if params.get("run") is not None:
        qs = qs.filter(pk__in=Prediction.objects.filter(run_id=params["run"]).values("pair_id"))
    if params.get("origin"):
        qs = qs.filter(origin=params["origin"])
    return qs


def batches(ids: list[int], size: int = BATCH) -> Iterator[list[int]]:
    for start in range(0, len(ids), size):
        yield ids[start:start + size]


def write_features(updates: dict[int, dict[str, float]], prefix: str) -> None:
    """Replace the ``prefix`` keys of each pair's features with ``updates[pair]`` (row-locked batch)."""
    with transaction.atomic():
        pairs = list(CandidatePair.objects.select_for_update().filter(pk__in=list(updates)).only("id", "features"))
        for pair in pairs:
            kept = {k: v for k, v in (pair.features or {}).items() if not k.startswith(prefix)}
            pair.features = {**kept, **{k: float(v) for k, v in updates[pair.pk].items()}}
        CandidatePair.objects.bulk_update(pairs, ["features"])


def score_each(job: Job, report: ProgressFn, score: Callable[[list], list[dict[str, float]]],
               prefix: str, *, sentences: bool = False) -> int:
    """Score the job's target pairs batch by batch with ``score(texts) -> features`` (``texts``: a
    (complex, simple) text per pair, or with ``sentences`` their sentence lists); returns the count."""
    ids = list(target_pairs(job.project, job.params).order_by("id").values_list("id", flat=True))
    done = 0
    for batch in batches(ids):
        texts = pair_sentences(batch) if sentences else pair_texts(batch)
        present = [pid for pid in batch if pid in texts]
        rows = score([texts[pid] for pid in present])
        write_features(dict(zip(present, rows)), prefix)
        done += len(batch)
        report(0.1 + 0.9 * done / max(1, len(ids)), f"{job.kind}: scored {done}/{len(ids)} pairs")
    return len(ids)


def reference_texts(project_id: int) -> list[tuple[str, str]]:
    """(complex, simple) texts of a reference project's imported pairs, in id order."""
    ids = list(CandidatePair.objects.filter(article__project_id=project_id, origin="import").order_by("id")
               .values_list("id", flat=True))
    out: list[tuple[str, str]] = []
    for batch in batches(ids, 2000):
        texts = pair_texts(batch)
        out += [texts[pid] for pid in batch if pid in texts]
    return out


def reference_key(text: str) -> str:
    """How a complex text is matched with its reference simplifications (punctuation counts)."""
    return normalise(text, keep_punctuation=True)


def reference_simplifications(project_id: int | None) -> dict[str, list[str]]:
    """``{normalised complex text: [reference simplifications]}`` from an imported pair corpus."""
    refs: dict[str, list[str]] = defaultdict(list)
    if project_id is not None:
        for complex_text, simple_text in reference_texts(project_id):
            refs[reference_key(complex_text)].append(simple_text)
    return refs


def model_dir(kind: str, job: Job) -> Path:
    folder = Path(settings.MODEL_ROOT) / kind
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"project-{job.project_id}-job-{job.pk}"


def save_model_version(job: Job, kind: str, path: Path, snapshot: dict, metrics: dict) -> ModelVersion:
    mv, _ = ModelVersion.objects.update_or_create(
        project=job.project, name=f"{kind} (job #{job.pk})",
        defaults={"kind": kind, "path": str(path), "training_snapshot": snapshot, "metrics": metrics},
    )
    return mv


def annotated_classes(project: Project, pairs) -> dict[int, str]:
    """``{pair id: aligned|partial|not}`` of annotated pairs: the stored gold when there is one,
    else the strict majority of the counted labels (ties count as not annotated); a value without a
    class leaves the pair out."""
    from annotation.services.review.gold_reading import pair_classes

    return pair_classes(project, pairs, default=None)
