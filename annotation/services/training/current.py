"""The project's training set now, built once per state of its data (issue 29 §4).

:func:`~annotation.services.training.dataset.training_set` reads every label, gold value, completion
and split of the project and the texts of its pairs. A training needs it three times — the request
that starts it (to refuse one with nothing to train on), the worker that trains, and every view of
the Models page ("Training data now") — so it is built once and kept in the cache under
:func:`data_state`: a digest of what the set is computed from (the dashboard's table marks — counts, last
ids and last changes of labels, gold, gold history, completions, articles; last ids of pairs and sentences
— the splits, exclusions, the project's settings and label scheme). A label given, changed or removed afterwards changes the state,
so the next reader builds the set again; nothing has to remember to invalidate it.

Used as ``current_training_set(project)`` (the start request, the worker) and
``training_summary(project)`` (the Models page: the snapshot and the refusal).
"""
from __future__ import annotations

from dataclasses import dataclass

from django.core.cache import cache

from annotation.digest import digest
from annotation.models import Article, KeptAggregate, Membership, Project, Split
from annotation.services.review import review_state
from annotation.services.training import dataset

TTL_S = 6 * 3600
"""How long a built set is kept (a newer data state replaces it sooner: its key changes)."""




@dataclass(frozen=True)
class TrainingSummary:
    """What the Models page shows of the training set: its snapshot (counts, hash) and why a training
    would be refused (None: it can start)."""

    snapshot: dict
    refusal: str | None
    as_of: str | None = None
    """When these figures were computed, given when they are of an older state of the data (``updating``)."""
    updating: bool = False


def data_state(project: Project) -> str:
    """A digest of everything :func:`~annotation.services.training.dataset.training_set` reads: the dashboard's
    cheap table marks (:func:`annotation.services.review.review_state.table_marks`: index-only aggregates,
    where counting the project's own million pairs and sentences took ~0.6 s a view), the project's settings
    and scheme, its splits and its excluded annotators."""
    parts: list[object] = [project.pk, project.created_at, project.config, project.label_scheme_id,
                           project.label_scheme.values if project.label_scheme_id else None,
                           *review_state.table_marks()]
    parts.append(sorted(Split.objects.filter(article__project=project).values_list("article_id", "name")))
    parts.append(sorted(Membership.objects.filter(project=project, excluded_at__isnull=False)
                        .values_list("user_id", flat=True)))
    return digest(parts)


def _set_key(project: Project) -> str:
    # one key a project: the cache holds its newest set only (a set holds every text it trains on; a
    # key per data state would keep one for each label given since, until they expire)
    return f"training-set:{project.pk}"


def _summary_key(project: Project, state: str) -> str:
    return f"training-summary:{project.pk}:{state}"  # small: one per state is harmless


def _current(project: Project, state: str) -> dataset.TrainingSet:
    held = cache.get(_set_key(project))
    if held is not None and held[0] == state:
        return held[1]
    data = dataset.training_set(project)
    cache.set(_set_key(project), (state, data), TTL_S)
    summary = TrainingSummary(data.snapshot, dataset.training_refusal(data))
    cache.set(_summary_key(project, state), summary, TTL_S)
    # and in the database, so a restarted server's Models page shows it (review_state.kept's rows)
    review_state.store(project, SUMMARY_NAME, lambda: {"snapshot": summary.snapshot, "refusal": summary.refusal}, state)
    return data


def current_training_set(project: Project) -> dataset.TrainingSet:
    """The project's training set now: the cached one while the data are unchanged, else built (and kept,
    in place of the project's older one)."""
    return _current(project, data_state(project))


def training_summary(project: Project) -> TrainingSummary:
    """The snapshot and refusal of :func:`current_training_set`, without loading the whole set when cached."""
    state = data_state(project)
    summary = cache.get(_summary_key(project, state))
    if summary is None:
        data = _current(project, state)
        summary = TrainingSummary(data.snapshot, dataset.training_refusal(data))
    return summary


LAZY_ARTICLES = 1000
"""From this many articles the Models page does not build the set while it answers (16 s at 20,000 article
pairs): it starts a ``training-summary`` job and says the figures are being computed."""
SUMMARY_JOB = "training-summary"
SUMMARY_NAME = "training-summary"
"""The summary's name among the project's kept aggregates (``KeptAggregate``)."""


def page_summary(project: Project, *, user=None) -> TrainingSummary | None:
    """What the Models page shows: the summary of the current data state when kept (in the cache, or in the
    database: a restarted server) or cheap to build (a project under :data:`LAZY_ARTICLES` articles); else,
    after starting one ``training-summary`` job (none while one is queued or running) whose worker keeps it for
    the next view, the summary kept of an older state (``updating``, ``as_of``), or None when there is none."""
    state = data_state(project)
    summary = cache.get(_summary_key(project, state))
    if summary is not None:
        return summary
    row = KeptAggregate.objects.filter(project_id=project.pk, name=SUMMARY_NAME).first()
    if row is not None and row.state == state:
        summary = TrainingSummary(row.value["snapshot"], row.value["refusal"])
        cache.set(_summary_key(project, state), summary, TTL_S)
        return summary
    if not Article.objects.filter(project=project).order_by()[LAZY_ARTICLES - 1:LAZY_ARTICLES].exists():
        return training_summary(project)
    review_state.start_refresh(project, SUMMARY_JOB, user=user)  # one job at a time, at most once a minute
    if row is None:
        return None
    return TrainingSummary(row.value["snapshot"], row.value["refusal"], as_of=row.computed_at.isoformat(), updating=True)


def run_summary_job(job_id: int) -> None:
    """The ``training-summary`` job: build the set of the data state now and keep its summary."""
    from annotation.services.background import progress

    progress.run_job(job_id, lambda job: {"refusal": training_summary(job.project).refusal})


__all__ = ["TrainingSummary", "current_training_set", "data_state", "page_summary", "run_summary_job",
           "training_summary"]
