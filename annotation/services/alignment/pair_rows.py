"""A page of the pairs list read as rows: the pairs' own columns (:data:`LIST_COLUMNS`, no model
instances) and, in two more queries, their sentences' texts and every run's prediction.

Prefetching ``members__sentence`` and ``predictions__run`` built about seven model instances per pair
(two members, two sentences, three predictions with their run): most of the time of a list page. Here
the same facts come as tuples (the page's documents' sentences, its predictions), keyed by pair id,
for :func:`annotation.serializers.pair_list_rows` (its ``texts`` and ``predictions`` context). Reading
the page's pairs themselves as ``values()`` rows instead of instances (with their article) halves what
is left of a page of 1,000 (issue 37: the client iterates a million pairs).
"""
from __future__ import annotations

from collections import defaultdict

from django.db.models import QuerySet

from annotation.models import AlignmentRun, CandidatePair, Prediction, Sentence, Side, key_indices

COMPLEX, SIMPLE = str(Side.COMPLEX), str(Side.SIMPLE)  # plain strings: the rows' keys


#: The columns of a pair a list page reads (``QuerySet.values``): what :func:`pair_list_rows` answers.
LIST_COLUMNS = ("id", "article_id", "article__title", "article__project_id", "complex_document_id",
                "simple_document_id", "complex_key", "simple_key", "score", "predicted_label", "features", "origin",
                "identical", "created_at")


def list_rows(qs: QuerySet[CandidatePair]) -> QuerySet:
    """``qs`` (filtered and ordered pairs) as :data:`LIST_COLUMNS` rows, for the list's paginator."""
    return qs.values(*LIST_COLUMNS)


def texts_and_predictions(pairs: list[dict]) -> dict[str, dict]:
    """``{"texts": {pair: {side: text}}, "predictions": {pair: [{run, method, score, label}, ...]}}`` for
    ``pairs`` (:data:`LIST_COLUMNS` rows): each side's sentences (the pair's document's sentences at its key's indices, as its
    ``PairSentence`` members are made) joined in document order, every run's prediction oldest run first.

    The sentences are read once per document of the page (a page of 1,000 pairs spans a few dozen
    documents), not once per member (two or more a pair), and each run's method once per run."""
    docs = {d for p in pairs for d in (p["complex_document_id"], p["simple_document_id"])}
    sentence = {(doc, index): text for doc, index, text in
                Sentence.objects.filter(document_id__in=docs).values_list("document_id", "index", "text")}
    texts: dict[int, dict[str, str]] = {}
    for p in pairs:
        sides = {}
        for side, doc, key in ((COMPLEX, p["complex_document_id"], p["complex_key"]),
                               (SIMPLE, p["simple_document_id"], p["simple_key"])):
            found = [sentence[(doc, i)] for i in sorted(key_indices(key)) if (doc, i) in sentence]
            if found:
                sides[side] = " ".join(found)
        texts[p["id"]] = sides
    predictions: dict[int, list[dict]] = defaultdict(list)
    rows = list(Prediction.objects.filter(pair_id__in=[p["id"] for p in pairs]).order_by("run_id")
                .values_list("pair_id", "run_id", "score", "predicted_label"))
    methods = dict(AlignmentRun.objects.filter(pk__in={run for _, run, _, _ in rows}).values_list("pk", "method"))
    for pair, run, score, label in rows:
        predictions[pair].append({"run": run, "method": methods[run], "score": score, "label": label})
    return {"texts": texts, "predictions": predictions}
