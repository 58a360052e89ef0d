"""Saving a run's alignments: the one writer of predicted sentence pairs, used by every run (chunks,
the one-process path and mining) and by the services that link sentences of a pair.

Writing is idempotent: sentence pairs are upserted on their identity (documents, sentence sets) and
the run's predictions on (run, pair), so re-delivering a task or retrying after a crash never
duplicates a pair, and a second run over the same corpus adds only pairs nobody proposed before."""
from __future__ import annotations

from collections.abc import Callable

from django.db import transaction

from annotation.models import (
    AlignmentRun,
    Article,
    CandidatePair,
    Document,
    PairSentence,
    Prediction,
    Sentence,
    Side,
    indices_key,
)
from annotation.services.corpus.documents import sentence_texts
from workers.engine import AlignedPair, Alignment, is_identical

# Origins a run's prediction replaces: a pair an annotator linked (or an export derived) that a model
# now predicts too becomes a model pair, so it enters the queue; imported gold and mined or candidate
# pairs keep theirs.
PREDICTION_REPLACES_ORIGIN = ("manual", "derived")


def save_alignment(run: AlignmentRun, article: Article, complex_doc: Document, simple_doc: Document,
                   alignment: Alignment, extra_features: Callable[[AlignedPair], dict[str, float]] | None = None) -> int:
    """:func:`save_alignments` of one document pair."""
    return save_alignments(run, [(article, complex_doc, simple_doc, alignment, extra_features)])


Saved = tuple[Article, Document, Document, Alignment, "Callable[[AlignedPair], dict[str, float]] | None"]


@transaction.atomic
def save_alignments(run: AlignmentRun, items: list[Saved]) -> int:
    """Attach the run's predictions to the project's sentence pairs of document pairs ``items``
    (article, complex doc, simple doc, alignment, extra_features), creating the pairs nobody
    proposed before; returns how many pairs the alignments had.

    Set-based and idempotent: one upsert of every pair of the batch on its identity (documents +
    sentence sets, ``ON CONFLICT``), one of the run's predictions on (run, pair), one insert of the
    sentence rows. A pair keeps the features others gave it (scoring jobs, ACCESS); the run's are
    added, and the pair shows this run's score and label. ``extra_features(pair)`` adds attributes
    computed by the application (e.g. ACCESS) to the engine's per-pair features."""
    items = [item for item in items if item[3].pairs]
    if not items:
        return 0
    texts = sentence_texts(list({d.pk for _, c, s, _, _ in items for d in (c, s)}))
    keyed: dict[tuple[int, int, str, str], tuple[int, AlignedPair, tuple]] = {}
    for item in items:
        _, complex_doc, simple_doc, alignment, _ = item
        for rank, p in enumerate({(indices_key(p.complex), indices_key(p.simple)): p for p in alignment.pairs}.items()):
            keyed[(complex_doc.pk, simple_doc.pk, *p[0])] = (rank, p[1], item)
    existing = {(c_doc, s_doc, c, s): (origin, features) for c_doc, s_doc, c, s, origin, features in CandidatePair.objects.filter(
        complex_document__in={k[0] for k in keyed}, simple_document__in={k[1] for k in keyed},
        complex_key__in={k[2] for k in keyed}, simple_key__in={k[3] for k in keyed},
    ).values_list("complex_document_id", "simple_document_id", "complex_key", "simple_key", "origin", "features")}
    features_of = {}
    rows = []
    for key, (_, p, (article, complex_doc, simple_doc, _, extra_features)) in keyed.items():
        run_features = {k: float(v) for k, v in {**(p.features or {}), **(extra_features(p) if extra_features else {})}.items()}
        features_of[key] = run_features
        origin, stored = existing.get(key, ("model", {}))
        rows.append(CandidatePair(
            article=article, complex_document=complex_doc, simple_document=simple_doc, complex_key=key[2],
            simple_key=key[3], score=float(p.score), predicted_label=p.label, features={**(stored or {}), **run_features},
            origin="model" if origin in PREDICTION_REPLACES_ORIGIN else origin,
            identical=is_identical(" ".join(texts[complex_doc.pk].get(i, "") for i in p.complex),
                                   " ".join(texts[simple_doc.pk].get(i, "") for i in p.simple))))
    CandidatePair.objects.bulk_create(
        rows, update_conflicts=True, unique_fields=["complex_document", "simple_document", "complex_key", "simple_key"],
        update_fields=["score", "predicted_label", "features", "origin"], batch_size=1000,
    )
    pairs = {(p.complex_document_id, p.simple_document_id, p.complex_key, p.simple_key): p for p in CandidatePair.objects.filter(
        complex_document__in={k[0] for k in keyed}, simple_document__in={k[1] for k in keyed},
        complex_key__in={k[2] for k in keyed}, simple_key__in={k[3] for k in keyed})}
    Prediction.objects.bulk_create(
        [Prediction(run=run, pair=pairs[key], score=float(p.score), predicted_label=p.label, features=features_of[key], rank=rank)
         for key, (rank, p, _) in keyed.items()],
        update_conflicts=True, unique_fields=["run", "pair"], update_fields=["score", "predicted_label", "features", "rank"],
        batch_size=1000,
    )
    link_sentences([pairs[key] for key in keyed])
    _store_uncertainty(run, [(pairs[key], p) for key, (_, p, _) in keyed.items()])
    return len(rows)


LINKS = ("aligned", "partial")
UNCERTAINTY_SOURCES = ("model", "disagreement")


def uncertainty_of(prediction: AlignedPair) -> float | None:
    """How unsure the model was of its decision on a pair, 0 (sure) … 1 (a coin toss): the engine's
    own ``uncertainty`` feature when it gives one (the trained crf: the pair model's class margin and
    the CRF marginal of the chosen link), else from a score in [0, 1] as ``1 − |2·score − 1|``."""
    features = prediction.features or {}
    if "uncertainty" in features:
        return float(features["uncertainty"])
    score = float(prediction.score)
    return 1.0 - abs(2.0 * score - 1.0) if 0.0 <= score <= 1.0 else None


def _store_uncertainty(run: AlignmentRun, predicted: list[tuple[CandidatePair, AlignedPair]]) -> None:
    """Set each pair's ``uncertainty`` (the active-learning order) from this run's prediction, or, with
    ``config["queue_uncertainty"] == "disagreement"``, the share of other methods' runs that decide
    the link differently."""
    source = (run.project.config or {}).get("queue_uncertainty", "model")
    if source == "disagreement":
        others: dict[int, dict[str, bool]] = {}
        for pair_id, method, label in (Prediction.objects.filter(pair__in=[p for p, _ in predicted])
                                       .exclude(run__method=run.method).order_by("run_id")
                                       .values_list("pair_id", "run__method", "predicted_label")):
            others.setdefault(pair_id, {})[method] = label in LINKS  # the latest run of each method
        values = {pair.pk: (sum(v != (p.label in LINKS) for v in others[pair.pk].values()) / len(others[pair.pk])
                            if others.get(pair.pk) else None) for pair, p in predicted}
    else:
        values = {pair.pk: uncertainty_of(p) for pair, p in predicted}
    CandidatePair.objects.bulk_update([CandidatePair(pk=pk, uncertainty=u) for pk, u in values.items()],
                                      ["uncertainty"], batch_size=500)


def link_sentences(pairs) -> None:
    """Create the PairSentence rows of ``pairs`` (skipping those that exist)."""
    pairs = list(pairs)
    if not pairs:
        return
    doc_ids = {p.complex_document_id for p in pairs} | {p.simple_document_id for p in pairs}
    sentence_ids = {(d, i): pk for pk, d, i in Sentence.objects.filter(document_id__in=doc_ids).values_list("pk", "document_id", "index")}
    members = []
    for p in pairs:
        members += [PairSentence(pair=p, sentence_id=sentence_ids[(p.complex_document_id, i)], side=Side.COMPLEX)
                    for i in p.complex_indices]
        members += [PairSentence(pair=p, sentence_id=sentence_ids[(p.simple_document_id, i)], side=Side.SIMPLE) for i in p.simple_indices]
    PairSentence.objects.bulk_create(members, ignore_conflicts=True)
