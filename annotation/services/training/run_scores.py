"""A run's scores against the project's exhaustive gold (issue 28 §3): Task 1 and Task 2 precision,
recall and F1, on the run's page, in ``GET /api/runs/<id>/`` (``scores``) and on the compare page.

* **Which gold.** The document pairs whose gold is exhaustive
  (:func:`~annotation.services.review.exhaustive.exhaustive_pairs`: gold imported as exhaustive, or
  article pairs declared complete in the whole-article view), with the links training learns and model
  metrics are measured on (:func:`~annotation.services.training.dataset.exhaustive_links`, the one
  precedence rule, read through :mod:`annotation.services.review.gold_reading`). An undecided sentence
  pair (a tie) is left out of both sides. Every other sentence pair there that the gold does not link is *not aligned*: each link
  the run predicts there that the gold lacks is a false positive.
* **Which of them.** Those the run aligned: for a succeeded run every one its plan listed (its level
  pairs, less skipped articles); otherwise those of its finished chunks or with one of its predictions.
  The others are left out (counted), not scored as misses.
* **How.** The run's links (predictions labelled aligned or partial; an n:m prediction stands for all
  its links) and the gold go to the engine's :func:`~workers.engine.evaluate`: micro-averaged over the
  document pairs, identical sentence pairs left out of both sides as the engine does (how many, is
  reported).
* **Trust.** Fewer articles than :func:`~annotation.services.training.metrics.min_trusted_articles`:
  too few to trust, the rule the Models page applies to model metrics.

Computed in a few queries whatever the run's size (only the exhaustive articles' pairs and predictions are
read) and kept per state of the data (:func:`run_scores`): a change to the gold shows at the next read. Lists
of runs leave it out.
"""
from __future__ import annotations

import hashlib
from collections import defaultdict

from django.db.models import Max, Min

from annotation.digest import digest
from annotation.errors import BeingComputed
from annotation.models import MINING_METHOD, AlignmentRun, Document, Prediction, RunChunk, Status, key_indices
from annotation.services.alignment.run_comparison import LINK_LABELS
from annotation.services.corpus.documents import engine_documents
from annotation.services.review import review_state
from annotation.services.review.exhaustive import ExhaustivePair, exhaustive_pairs
from annotation.services.training.dataset import exhaustive_gold
from annotation.services.training.metrics import min_trusted_articles
from workers.engine import AlignedPair, Alignment, ArticlePair, evaluate

DocPair = tuple[int, int]
#: What the scores are computed over, as the run and compare pages say it.
OVER = ("Task 1 (aligned + partial vs not aligned) and Task 2 (aligned vs partial + not aligned) precision, recall and "
        "F1 of the run's links against the gold of the document pairs whose gold is exhaustive (imported as exhaustive, "
        "or marked complete in the whole-article view) and that the run aligned, micro-averaged: every sentence pair "
        "there that the gold does not link is not aligned, so each link the run predicts there that the gold lacks "
        "counts as a false positive")
#: How identical sentence pairs are handled (the engine's evaluate), as the pages say it.
IDENTICAL = ("identical sentence pairs (the same text after whitespace normalisation) are left out of both the gold "
             "and the run's links, as the engine's evaluate does (they are trivial)")


def _empty(reason: str, **counts) -> dict:
    return {"available": False, "reason": reason, "task1": None, "task2": None, "n_articles": 0,
            "n_document_pairs": 0, "document_pairs_left_out": 0, "gold": {"imported": 0, "completed": 0},
            "identical_left_out": {"gold": 0, "predicted": 0}, "min_articles": min_trusted_articles(),
            "too_few": True, "warnings": [], "over": OVER, "identical": IDENTICAL, **counts}


def _predictions(run: AlignmentRun, articles: list[int], wanted: set[DocPair]
                 ) -> tuple[dict[DocPair, list[AlignedPair]], set[DocPair]]:
    """The run's links in the ``wanted`` document pairs, and every wanted document pair it predicted in."""
    links: dict[DocPair, list[AlignedPair]] = defaultdict(list)
    seen: set[DocPair] = set()
    rows = (Prediction.objects.filter(run=run, pair__article_id__in=articles)
            .values_list("pair__complex_document_id", "pair__simple_document_id", "pair__complex_key",
                         "pair__simple_key", "predicted_label", "score"))
    for c, s, complex_key, simple_key, label, score in rows:
        if (c, s) not in wanted:
            continue
        seen.add((c, s))
        if label in LINK_LABELS:
            links[(c, s)].append(AlignedPair(tuple(key_indices(complex_key)), tuple(key_indices(simple_key)), label,
                                             float(score or 0.0)))
    return links, seen


def _planned(run: AlignmentRun, articles: list[int]) -> set[DocPair]:
    """The document pairs of ``articles`` a run's plan lists: its level pairs (none: each adjacent pair
    of ranks), skipped articles left out — as :func:`~annotation.services.alignment.run_work.document_pairs`."""
    skip = set(run.params.get("skip_articles") or ())
    docs: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for pk, article, level in (Document.objects.filter(article_id__in=articles).order_by("article_id", "rank")
                               .values_list("pk", "article_id", "level")):
        if article not in skip:
            docs[article].append((pk, level))
    out: set[DocPair] = set()
    for found in docs.values():
        if run.level_pairs:
            by_level = {level: pk for pk, level in found}
            out.update((by_level[c], by_level[s]) for c, s in run.level_pairs if c in by_level and s in by_level)
        else:
            out.update((a, b) for (a, _), (b, _) in zip(found, found[1:]))
    return out


def aligned_document_pairs(run: AlignmentRun, articles: list[int], wanted: set[DocPair],
                           predicted: set[DocPair]) -> set[DocPair]:
    """Which of the ``wanted`` document pairs the run aligned (module docstring); ``predicted``: those
    it predicted in."""
    found = wanted & predicted
    if run.status == Status.SUCCEEDED and run.method != MINING_METHOD:
        return found | (wanted & _planned(run, articles))
    for work in RunChunk.objects.filter(run=run, status=Status.SUCCEEDED).values_list("work", flat=True):
        found.update(key for _, c, s in work if (key := (int(c), int(s))) in wanted)
    return found


def gold_pairs(run: AlignmentRun, scored: list[ExhaustivePair],
               undecided: dict[DocPair, set[tuple[int, int]]] | None = None) -> list[ArticlePair]:
    """The engine's gold article pairs of the exhaustive document pairs ``scored`` (the one gold
    reading, :func:`~annotation.services.training.dataset.exhaustive_gold`); ``undecided`` (filled
    in when given): each document pair's undecided cells, which the scores leave out of both sides."""
    gold = exhaustive_gold(run.project, scored)
    docs = engine_documents({d for p in scored for d in (p.complex_document_id, p.simple_document_id)})
    out = []
    for p in scored:
        found, ties = gold[(p.complex_document_id, p.simple_document_id)]
        if undecided is not None:
            undecided[(p.complex_document_id, p.simple_document_id)] = ties
        ordered = sorted(found)
        out.append(ArticlePair(f"{p.article_id}:{p.complex_document_id}-{p.simple_document_id}",
                               docs[p.complex_document_id], docs[p.simple_document_id], gold=tuple(ordered),
                               gold_labels=tuple(found[k] for k in ordered)))
    return out


def _covers(link: AlignedPair, cells: set[tuple[int, int]]) -> bool:
    return bool(cells) and any((c, s) in cells for c in link.complex for s in link.simple)


SCORES_JOB = "run-scores"


def _kept_scores(run: AlignmentRun, *, page: bool) -> review_state.Kept[dict]:
    # what the project's state does not mark: the run's own predictions and chunks (a finished run's rarely change)
    # (the run's pair count and its first and last pair on the (run, pair) index: counting a million predictions
    # on every view cost more than the scores' warm budget)
    ends = Prediction.objects.filter(run=run).order_by().aggregate(first=Min("pair_id"), last=Max("pair_id"))
    own = (run.pair_count, ends["first"], ends["last"],
           list(RunChunk.objects.filter(run=run).order_by("pk").values_list("pk", "status")))
    mark = hashlib.sha256(repr((min_trusted_articles(), own)).encode()).hexdigest()[:16]
    refresh = review_state.Refresh(SCORES_JOB, {"run": run.pk}, f"run #{run.pk}'s scores") if page else None
    # one name a run (its newest scores kept), the run's own marks in the state
    return review_state.kept(run.project, f"run-scores:{run.pk}", lambda: compute_run_scores(run),
                             current=digest([review_state.state(run.project), mark]), refresh=refresh)


def run_scores(run: AlignmentRun) -> dict:
    """:func:`compute_run_scores` of the data now, kept per state of the project's data and of the run's
    predictions and chunks once the run is finished (:func:`annotation.services.review.review_state.kept`: a
    label, gold, completion, import, run or settings change computes them again) — the run's API and the
    comparison of two runs read them on every view, and at a million pairs they take seconds."""
    if not run.is_finished:
        return compute_run_scores(run)
    return _kept_scores(run, page=False).value


def api_scores(run: AlignmentRun) -> dict:
    """The API's scores of ``run`` (its detail, the comparison of two runs): :func:`run_scores`, except that a big
    project's (:func:`~annotation.services.review.review_state.is_big`) are the scores kept of the data's latest
    state with ``as_of`` and ``current`` (False: an older state's while a ``run-scores`` job computes the new ones).

    Raises:
        BeingComputed: a big project's finished run with no scores kept yet (its job started; the API answers 202)."""
    if not run.is_finished or not review_state.is_big(run.project):
        return run_scores(run)
    found = _kept_scores(run, page=True)
    return {**found.value, "as_of": found.as_of.isoformat(), "current": found.current}


def page_scores(run: AlignmentRun) -> dict:
    """The run page's scores: :func:`run_scores`, except that a big project's page shows the scores kept of an
    older state (``as_of``, ``updating: True``) while a ``run-scores`` job computes the new ones, and before any
    are kept says so (``computing``: the job, :func:`~annotation.services.review.review_state.job_summary`) rather
    than computing them while it answers."""
    if not run.is_finished:
        return {**compute_run_scores(run), "as_of": None, "updating": False, "computing": None}
    try:
        found = _kept_scores(run, page=True)
    except BeingComputed as pending:
        return {"available": False, "as_of": None, "updating": False, "computing": pending.job}
    return {**found.value, "as_of": found.as_of.isoformat(), "updating": not found.current, "computing": None}


def run_scores_job(job_id: int) -> None:
    """The ``run-scores`` job: compute the scores of the run in its params against the data now and keep them."""
    from annotation.services.background import progress

    def scores(job) -> dict:
        run = AlignmentRun.objects.select_related("project__label_scheme").get(pk=job.params["run"])
        _kept_scores(run, page=False)
        return {"run": run.pk}

    progress.run_job(job_id, scores)


def compute_run_scores(run: AlignmentRun) -> dict:
    """Task 1 / Task 2 of ``run`` against the project's exhaustive gold (module docstring):
    ``{"available", "reason", "task1", "task2"`` (engine PRF dicts), ``"n_articles", "n_document_pairs",
    "document_pairs_left_out", "gold": {imported, completed}, "identical_left_out": {gold, predicted},
    "min_articles", "too_few", "warnings", "over", "identical", "finished"}``."""
    exhaustive = exhaustive_pairs(run.project)
    finished = {"finished": run.is_finished}
    if not exhaustive:
        return _empty("this project has no exhaustive gold: import gold as exhaustive, or mark article pairs "
                      "complete in the whole-article view", **finished)
    articles = sorted({p.article_id for p in exhaustive})
    wanted = {(p.complex_document_id, p.simple_document_id) for p in exhaustive}
    links, predicted = _predictions(run, articles, wanted)
    aligned = aligned_document_pairs(run, articles, wanted, predicted)
    scored = [p for p in exhaustive if (p.complex_document_id, p.simple_document_id) in aligned]
    if not scored:
        return _empty(f"the run aligned none of the {len(wanted)} document pairs with exhaustive gold",
                      document_pairs_left_out=len(wanted), **finished)
    ties: dict[DocPair, set[tuple[int, int]]] = {}
    gold = gold_pairs(run, scored, ties)
    # an undecided sentence pair (a tie) is neither a link nor "not": the run's link there is not scored
    predictions = [Alignment(g.id, [a for a in links.get(key, []) if not _covers(a, ties.get(key, set()))])
                   for p, g in zip(scored, gold) for key in [(p.complex_document_id, p.simple_document_id)]]
    result = evaluate(predictions, gold)
    everything = evaluate(predictions, gold, exclude_identical=False)
    n = len({p.article_id for p in scored})
    minimum = min_trusted_articles()
    warnings = [f"measured on {n} article{'s' if n != 1 else ''} with exhaustive gold: too few to trust (fewer than "
                f"{minimum})"] if n < minimum else []
    if not run.is_finished:
        warnings.append("the run has not finished: scores over the document pairs it has aligned so far")
    return {"available": True, "reason": None, "task1": result["task1"], "task2": result["task2"], "n_articles": n,
            "n_document_pairs": result["n_articles"], "document_pairs_left_out": len(wanted) - len(scored),
            "gold": {"imported": sum(p.imported for p in scored), "completed": sum(not p.imported for p in scored)},
            "identical_left_out": {side: everything["task1"][key] - result["task1"][key]
                                   for side, key in (("gold", "n_gold"), ("predicted", "n_pred"))},
            "min_articles": minimum, "too_few": n < minimum, "warnings": warnings, "over": OVER,
            "identical": IDENTICAL, **finished}


__all__ = ["IDENTICAL", "OVER", "aligned_document_pairs", "api_scores", "compute_run_scores", "gold_pairs", "page_scores", "run_scores",
           "run_scores_job"]
