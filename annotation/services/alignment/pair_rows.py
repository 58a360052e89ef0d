"""What a page of the pairs list shows besides the pairs' own columns, read as rows in two queries.

Prefetching ``members__sentence`` and ``predictions__run`` built about seven model instances per pair
(two members, two sentences, three predictions with their run): most of the time of a list page. Here
the same facts come as tuples, keyed by pair id, for :class:`annotation.serializers.CandidatePairSerializer`
(its ``texts`` and ``predictions`` context).
"""
from __future__ import annotations

from collections import defaultdict

from annotation.models import PairSentence, Prediction


def texts_and_predictions(pair_ids: list[int]) -> dict[str, dict]:
    """``{"texts": {pair: {side: text}}, "predictions": {pair: [{run, method, score, label}, ...]}}`` for
    ``pair_ids``: each side's sentences joined in document order, every run's prediction oldest run first."""
    sentences: dict[int, dict[str, list[tuple[int, str]]]] = defaultdict(lambda: defaultdict(list))
    for pair, side, index, text in (PairSentence.objects.filter(pair_id__in=pair_ids)
                                    .values_list("pair_id", "side", "sentence__index", "sentence__text")):
        sentences[pair][side].append((index, text))
    texts = {pair: {side: " ".join(t for _, t in sorted(rows)) for side, rows in sides.items()}
             for pair, sides in sentences.items()}
    predictions: dict[int, list[dict]] = defaultdict(list)
    for pair, run, method, score, label in (Prediction.objects.filter(pair_id__in=pair_ids).order_by("run_id")
                                            .values_list("pair_id", "run_id", "run__method", "score", "predicted_label")):
        predictions[pair].append({"run": run, "method": method, "score": score, "label": label})
    return {"texts": texts, "predictions": predictions}
