"""The researcher dashboard's numbers: progress per project and per annotator, label counts, runs.

Speed is reported two ways: ``items_per_hour`` from the time annotators spent on each item (the
``seconds`` the labelling page measured) and ``items_per_hour_wall`` from the labels' timestamps,
counting the gaps between consecutive labels as working time up to :data:`BREAK_SECONDS` (a longer
gap is a break, not work).

Every figure is kept per state of what it reads (:func:`annotation.services.review.review_state.kept`: in
the cache and in the database): :func:`dashboard` (the API) and :func:`page_aggregates` (the page) compute
each one once per label, adjudication, completion, import, run or settings change, not once per view, and a
restarted server reads them back. After a change a big project's dashboard shows the figures it kept "as of"
their time, marked ``updating``, while a ``dashboard-figures`` job (:func:`run_figures_job`) computes the new
ones (seconds at a million pairs); a small project's computes them at once. Before any figure is kept (the
first view of a big project) the page says "computing … (started at …)" and the API answers ``202 Accepted``
(:class:`~annotation.errors.BeingComputed`) while the job computes them.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime

from django.db.models import Count, Exists, Max, OuterRef

from annotation.digest import digest
from annotation.errors import BeingComputed
from annotation.label_schemes import scheme_kind
from annotation.models import (
    Adjudication,
    AlignmentRun,
    CandidatePair,
    Job,
    Label,
    Membership,
    Prediction,
    Project,
    Role,
)
from annotation.services.review import adjudication, agreement, gold_counts, gold_reading, qc
from annotation.services.review.review_state import Kept, Refresh, kept, state, store

BREAK_SECONDS = 30 * 60


def _rate(items: int, seconds: float) -> float | None:
    return round(items * 3600.0 / seconds, 1) if items and seconds > 0 else None


def wall_seconds(times: list[datetime], first_item_seconds: float = 0.0) -> float:
    """Working time spanned by a sorted list of label times: gaps up to :data:`BREAK_SECONDS`
    count, longer ones don't; the first item of the list adds its own time on item."""
    total = first_item_seconds
    for earlier, later in zip(times, times[1:]):
        gap = (later - earlier).total_seconds()
        if gap <= BREAK_SECONDS:
            total += gap
    return total


def annotator_progress(project: Project) -> list[dict]:
    """One row per annotator (every annotator membership, and anyone else who labelled here):
    counted labels, test answers and accuracy, time on item, speed, and exclusion."""
    memberships = {m.user_id: m for m in Membership.objects.filter(project=project).select_related("user")}
    accuracy = qc.test_accuracy(project)
    labels = (Label.objects.filter(pair__article__project=project)
              .values_list("annotator_id", "annotator__username", "seconds", "created_at", "is_test_question")
              .order_by("annotator_id", "created_at"))
    per_user: dict[int, dict] = defaultdict(lambda: {"labels": 0, "tests": 0, "seconds": 0.0, "times": [],
                                                    "first_seconds": 0.0, "username": ""})
    for user_id, username, seconds, created_at, is_test in labels:
        row = per_user[user_id]
        row["username"] = username
        row["labels" if not is_test else "tests"] += 1
        row["seconds"] += seconds or 0.0
        if not row["times"]:
            row["first_seconds"] = seconds or 0.0
        row["times"].append(created_at)
    user_ids = [uid for uid, m in memberships.items() if m.role == Role.ANNOTATOR] + \
               [uid for uid in per_user if uid not in memberships or memberships[uid].role != Role.ANNOTATOR]
    out = []
    for user_id in dict.fromkeys(user_ids):
        row = per_user.get(user_id) or {"labels": 0, "tests": 0, "seconds": 0.0, "times": [], "first_seconds": 0.0,
                                        "username": ""}
        membership = memberships.get(user_id)
        done = row["labels"] + row["tests"]
        result = accuracy.get(user_id)
        out.append({
            "annotator": membership.user.username if membership else row["username"],
            "role": membership.role if membership else None,
            "labelled": row["labels"],
            "test_answers": result.answers if result else 0,
            "test_accuracy": result.accuracy if result else None,
            "seconds": round(row["seconds"], 1),
            "mean_seconds": round(row["seconds"] / done, 1) if done else None,
            "items_per_hour": _rate(done, row["seconds"]),
            "items_per_hour_wall": _rate(done, wall_seconds(row["times"], row["first_seconds"])),
            "first_label": row["times"][0].isoformat() if row["times"] else None,
            "last_label": row["times"][-1].isoformat() if row["times"] else None,
            "excluded": bool(membership and membership.excluded_at),
            "excluded_at": membership.excluded_at.isoformat() if membership and membership.excluded_at else None,
            "exclusion_reason": membership.exclusion_reason if membership else "",
        })
    return sorted(out, key=lambda r: r["annotator"])


def label_counts(project: Project, *, kept_gold: bool = False) -> dict:
    """Counted votes and gold per scheme value (Likert: per dimension and point), as the scheme's kind
    counts them (:meth:`annotation.label_schemes.SchemeKind.label_counts`). A categorical scheme's gold
    is the one gold reading's (:func:`annotation.services.review.gold_reading.pair_values`, the values
    exports and training read; ties as ``undecided``; ``kept_gold``: from the per-article counts kept under their
    evidence marks, :func:`annotation.services.review.gold_counts.value_counts`, the figures job's); a Likert
    scheme's, its stored ratings gold."""
    scheme = project.label_scheme
    if scheme_kind(scheme).gold and kept_gold:
        gold = gold_counts.value_counts(project)
    elif scheme_kind(scheme).gold:
        gold = dict(Counter(g.value for g in gold_reading.pair_values(project, ties=True).values()))
    else:
        gold = dict(Adjudication.objects.filter(pair__article__project=project).order_by().values_list("value")
                    .annotate(n=Count("id")))
    return scheme_kind(scheme).label_counts(scheme, gold_reading.counted_labels(project), gold)


def project_progress(project: Project) -> dict:
    """Pairs, how many have ≥ 1 and ≥ k (the QC overlap) counted votes, gold, and the review queue."""
    config = qc.qc_config(project)
    per_pair = dict(gold_reading.counted_labels(project).order_by().values_list("pair_id").annotate(n=Count("id")))
    try:
        queue = len(adjudication.queue_pair_ids(project))
    except adjudication.AdjudicationError:
        queue = None
    return {
        "pairs": CandidatePair.objects.filter(article__project=project).count(),
        "labelled_pairs": len(per_pair),
        "fully_labelled_pairs": sum(1 for n in per_pair.values() if n >= config.overlap),
        "overlap": config.overlap,
        "votes": sum(per_pair.values()),
        "gold": adjudication.gold_counts(project),
        "review_queue": queue,
        "review_mode": (project.config or {}).get("adjudicate", "disagreements"),
    }


RUNS_SHOWN = 20


def _latest_runs(project: Project, limit: int = RUNS_SHOWN) -> list[AlignmentRun]:
    return list(AlignmentRun.objects.filter(project=project).order_by("-created_at", "-pk")[:limit])


def new_pairs(project: Project, limit: int = RUNS_SHOWN) -> dict[int, int]:
    """``{run: pairs it predicted that no earlier run did}`` of the latest ``limit`` runs: an anti-join over every
    prediction of those runs (2 s of the ``runs`` figure's 2.3 at 3 × 1,000,000 predictions)."""
    ids = [r.pk for r in _latest_runs(project, limit)]
    earlier = Prediction.objects.filter(pair=OuterRef("pair"), run_id__lt=OuterRef("run_id"))
    return dict(Prediction.objects.filter(run_id__in=ids).filter(~Exists(earlier)).order_by().values_list("run_id")
                .annotate(n=Count("id")))


def runs_state(project: Project) -> str:
    """A digest of what :func:`new_pairs` reads: the project's runs (a run started, finished, retried or deleted moves
    their rows) and the highest prediction id (a running run writing pairs) — not the labels, gold or completions, so
    a big project's figures job after a label does not read three million predictions again."""
    runs = list(AlignmentRun.objects.filter(project=project).order_by("pk")
                .values_list("pk", "status", "progress", "pair_count", "finished_at", "created_at"))
    return digest([project.pk, runs, Prediction.objects.order_by().aggregate(last=Max("pk"))])


def kept_new_pairs(project: Project) -> dict[int, int]:
    """:func:`new_pairs`, kept per :func:`runs_state` (in the cache and the database, ``review_state.kept``)."""
    found = kept(project, "runs-new-pairs", lambda: sorted(new_pairs(project).items()), current=runs_state(project))
    return {int(run): n for run, n in found.value}


def run_statuses(project: Project, limit: int = RUNS_SHOWN, *, new: dict[int, int] | None = None) -> list[dict]:
    """The latest runs with what they added: ``pair_count`` sentence pairs predicted, ``new_pairs``
    of them predicted by no earlier run (``new``: :func:`new_pairs` when the caller has them), ``labelled_pairs`` of
    them with a counted human vote (a pair labelled once counts for every run that predicted it: labels belong to the
    pair)."""
    runs = _latest_runs(project, limit)
    ids = [r.pk for r in runs]
    labelled = gold_reading.counted_labels(project).values("pair_id")
    per_run = dict(Prediction.objects.filter(run_id__in=ids, pair__in=labelled).order_by().values_list("run_id")
                   .annotate(n=Count("pair_id", distinct=True)))
    new = new_pairs(project, limit) if new is None else new
    return [{"id": r.pk, "method": r.method, "status": r.status, "progress": r.progress, "message": r.message,
             "error": r.error, "pair_count": r.pair_count, "new_pairs": new.get(r.pk, 0),
             "labelled_pairs": per_run.get(r.pk, 0), "created_at": r.created_at.isoformat(),
             "finished_at": r.finished_at.isoformat() if r.finished_at else None}
            for r in runs]


FIGURES_JOB = "dashboard-figures"
API_FIGURES = ("progress", "annotators", "labels", "runs")
PAGE_FIGURES = ("progress", "annotators", "labels", "agreement")


def _computations(project: Project) -> dict:
    return {"progress": lambda: project_progress(project), "annotators": lambda: annotator_progress(project),
            "labels": lambda: label_counts(project, kept_gold=True), "runs": lambda: run_statuses(project, new=kept_new_pairs(project)),
            "agreement": lambda: agreement.project_agreement(project)}


REFRESH = Refresh(FIGURES_JOB, None, "the dashboard's figures")
"""A big project's dashboard figures come from one ``dashboard-figures`` job (:func:`run_figures_job`)."""


def figures(project: Project, names: tuple[str, ...]) -> tuple[dict, dict]:
    """The ``names``d figures (of :func:`_computations`) and what they are of: ``{"as_of": the oldest figure's
    time, "updating": whether any is an older state's, shown while a job computes the new one}``.

    Raises:
        BeingComputed: a big project with no figures kept yet (its ``dashboard-figures`` job started)."""
    now = state(project)
    compute = _computations(project)
    found: dict[str, Kept] = {name: kept(project, name, compute[name], current=now, refresh=REFRESH)
                              for name in names}
    as_of = min(k.as_of for k in found.values())
    return {name: k.value for name, k in found.items()}, {"as_of": as_of.isoformat(),
                                                          "updating": not all(k.current for k in found.values())}


def dashboard(project: Project) -> dict:
    """Everything the dashboard API returns (agreement and distributions have their own endpoints), with
    ``figures_as_of`` and ``updating`` (:func:`figures`).

    Raises:
        BeingComputed: a big project's figures that nothing computed yet (the API answers 202)."""
    parts, of = figures(project, API_FIGURES)
    return {"project": project.pk, **parts, "thresholds": (project.config or {}).get("thresholds"),
            "figures_as_of": of["as_of"], "updating": of["updating"], **language_tool_status(project)}


def page_aggregates(project: Project) -> dict:
    """The dashboard page's figures: ``progress``, ``annotators``, ``labels`` and ``agreement``
    (:func:`annotation.services.review.agreement.project_agreement`), ``as_of`` / ``updating`` (:func:`figures`),
    and ``computing``: None, or the job (:func:`~annotation.services.review.review_state.job_summary`) computing a
    big project's first figures — then the figures are None and the page says so (it answers at once)."""
    try:
        parts, of = figures(project, PAGE_FIGURES)
    except BeingComputed as pending:
        return {**dict.fromkeys(PAGE_FIGURES), "as_of": None, "updating": False, "computing": pending.job}
    return {**parts, **of, "computing": None}


def project_agreement(project: Project) -> dict:
    """:func:`annotation.services.review.agreement.project_agreement` of the data now, kept per state (the API's), with
    ``figures_as_of`` and ``updating`` as the dashboard's (a big project's: the last kept while its job computes anew).

    Raises:
        BeingComputed: a big project's agreement that nothing computed yet (the API answers 202)."""
    found = kept(project, "agreement", lambda: agreement.project_agreement(project), refresh=REFRESH)
    return {**found.value, "figures_as_of": found.as_of.isoformat(), "updating": not found.current}


def run_figures_job(job_id: int) -> None:
    """The ``dashboard-figures`` job: compute every figure of the data now and keep it for the next view."""
    from annotation.services.background import progress

    def figures(job: Job) -> dict:
        now = state(job.project)
        for name, compute in _computations(job.project).items():
            store(job.project, name, compute, now)
        return {"state": now}

    progress.run_job(job_id, figures)


def language_tool_status(project: Project) -> dict:
    """The project's encoder and spaCy pipeline, and the features its runs and jobs left out."""
    from annotation.services.projects.language_tools import describe, missing_features

    return {"language_tools": describe(project), "missing_features": missing_features(project)}
