"""The dashboard's cached figures (issue 37) equal a fresh computation after every kind of change: a label
given, edited or removed, an adjudication, a completion and its removal, an exclusion, an import, a run
starting and finishing, and a settings change — each moves ``review_state.state``."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from annotation.errors import BeingComputed
from annotation.models import AlignmentRun, CandidatePair, Job, KeptAggregate, Status, indices_key
from annotation.services.editing import completion
from annotation.services.review import adjudication, agreement, annotator, dashboard, labelling, qc, review_state
from annotation.services.review.label_input import LabelInput
from tests import factories, labels
from tests.annotation.services.review.test_adjudication import crowd, make_pairs  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db


def fresh(project) -> dict:
    return {"progress": dashboard.project_progress(project), "annotators": dashboard.annotator_progress(project),
            "labels": dashboard.label_counts(project), "runs": dashboard.run_statuses(project),
            "agreement": agreement.project_agreement(project)}


def cached(project) -> dict:
    api, page = dashboard.dashboard(project), dashboard.page_aggregates(project)
    assert {k: page[k] for k in ("progress", "annotators", "labels")} == {k: api[k] for k in
                                                                         ("progress", "annotators", "labels")}
    return {**{k: api[k] for k in ("progress", "annotators", "labels", "runs")}, "agreement": page["agreement"]}


def label(user, project, pair, value: str):
    return labelling.submit_label(annotator.of(user, project), pair,
                                  LabelInput.parse(project.label_scheme, value=value, seconds=5.0), source=labelling.ARTICLE)[0]


def run_job(project, kind: str, run) -> None:
    """Run the one queued job of ``kind`` (its task function, as a worker would)."""
    queued = list(Job.objects.filter(project=project, kind=kind, status=Status.QUEUED))
    assert len(queued) == 1, f"{len(queued)} queued {kind} jobs"
    run(queued[0].pk)
    assert Job.objects.get(pk=queued[0].pk).status == Status.SUCCEEDED


@pytest.mark.parametrize("mode", ["cache", "restart", "big"])
def test_the_cached_figures_follow_every_change(project, users, crowd, mode, monkeypatch):  # noqa: F811
    """``cache``: one process; ``restart``: the cache emptied before every read (a restarted server reads the
    kept rows); ``big``: a big project's page shows the figures of the state before the change, marked
    updating, until its one ``dashboard-figures`` job ran."""
    cache.clear()
    if mode == "big":
        monkeypatch.setattr(review_state, "LAZY_ARTICLES", 1)
        monkeypatch.setattr(review_state, "REFRESH_EVERY_S", 0)  # a job after every change (the next test: once a minute)
    anna, bob, _ = crowd
    pairs = make_pairs(project, 4)
    article = pairs[0].article
    complex_doc, simple_doc = article.documents.order_by("rank")
    steps = []
    before: list[dict] = []

    def check(step: str) -> None:
        now = review_state.state(project)
        assert now not in steps, f"{step}: the state did not move"
        steps.append(now)
        if mode == "restart":
            cache.clear()
        if mode == "big" and not before:  # nothing kept yet: the page and the API compute nothing, one job does
            assert dashboard.page_aggregates(project)["computing"]["kind"] == dashboard.FIGURES_JOB
            with pytest.raises(BeingComputed):
                dashboard.dashboard(project)
            run_job(project, dashboard.FIGURES_JOB, dashboard.run_figures_job)
        if mode == "big" and before:
            page, api = dashboard.page_aggregates(project), dashboard.dashboard(project)
            assert page["updating"] and api["updating"], step
            assert {k: page[k] for k in ("progress", "annotators", "labels", "agreement")} == \
                   {k: before[-1][k] for k in ("progress", "annotators", "labels", "agreement")}, step
            assert api["runs"] == before[-1]["runs"] and api["figures_as_of"] == page["as_of"], step
            run_job(project, dashboard.FIGURES_JOB, dashboard.run_figures_job)
        expected = fresh(project)
        assert cached(project) == expected, step
        if mode == "restart":
            cache.clear()
        assert cached(project) == expected, f"{step} (read again)"
        assert not dashboard.page_aggregates(project)["updating"], step
        before.append(expected)

    check("start")
    first = label(anna, project, pairs[0], "aligned")
    check("a label")
    label(bob, project, pairs[0], "partial")
    check("a second annotator's label (agreement)")
    labels.edit_label(anna, first, value="partial")
    check("a label edited")
    labelling.delete_label(anna, first)
    check("a label removed")
    adjudication.decide(pairs[1], "aligned", users["rita"])
    check("an adjudication")
    adjudication.decide(pairs[1], "not-aligned", users["rita"])
    check("an adjudication changed")
    label(bob, project, pairs[2], "aligned")
    completion.mark_complete(bob, article, complex_doc, simple_doc)
    check("a completion")
    completion.reopen(bob, complex_doc, simple_doc)
    check("a completion removed")
    qc.exclude(bob, project, "spam")
    check("an exclusion")
    imported = factories.make_article(project, "Imported", {"adv": [["One long sentence here."]], "ele": [["One."]]})
    c, s = imported.documents.order_by("rank")
    CandidatePair.objects.create(article=imported, complex_document=c, simple_document=s,
                                 complex_key=indices_key([0]), simple_key=indices_key([0]))
    check("an import")
    run = AlignmentRun.objects.create(project=project, method="tfidf", status=Status.RUNNING)
    check("a run started")
    AlignmentRun.objects.filter(pk=run.pk).update(status=Status.SUCCEEDED, progress=100, pair_count=1)
    check("a run finished")
    project.config = {**(project.config or {}), "qc": {**(project.config or {}).get("qc", {}), "overlap": 2}}
    project.save(update_fields=["config"])
    check("a settings change (the QC overlap)")
    assert cached(project)["progress"]["overlap"] == 2


def test_an_unchanged_project_is_read_from_the_cache(project, users, django_assert_max_num_queries):
    cache.clear()
    make_pairs(project, 3)
    dashboard.dashboard(project)
    dashboard.page_aggregates(project)
    with django_assert_max_num_queries(12):  # the state's marks and the language tools, no aggregate
        dashboard.dashboard(project)
    with django_assert_max_num_queries(10):
        dashboard.page_aggregates(project)


def test_a_restarted_server_reads_the_kept_figures_without_computing_them(project, users, django_assert_max_num_queries):
    """The first view after a restart (the cache empty) reads the figures kept in the database at the same
    state: as many queries as a view from the cache plus one a figure, whatever the project's size."""
    make_pairs(project, 3)
    dashboard.dashboard(project)
    dashboard.page_aggregates(project)
    assert set(KeptAggregate.objects.filter(project=project).values_list("name", flat=True)) >= \
           {"progress", "annotators", "labels", "runs", "agreement"}  # and the adjudication queue progress read
    cache.clear()
    with django_assert_max_num_queries(12 + 4):
        api = dashboard.dashboard(project)
    cache.clear()
    with django_assert_max_num_queries(10 + 4):
        page = dashboard.page_aggregates(project)
    assert not api["updating"] and not page["updating"]
    assert {k: page[k] for k in ("progress", "annotators", "labels")} == \
           {k: fresh(project)[k] for k in ("progress", "annotators", "labels")}


def test_a_big_project_starts_one_figures_job_however_often_its_page_is_read(project, users, crowd,  # noqa: F811
                                                                               monkeypatch):
    monkeypatch.setattr(review_state, "LAZY_ARTICLES", 1)
    anna, _, _ = crowd
    pairs = make_pairs(project, 2)
    for _ in range(3):  # nothing kept yet: nothing computed while it answers, one job started
        computing = dashboard.page_aggregates(project)
        assert computing["progress"] is None and computing["computing"]["status"] == Status.QUEUED
    assert Job.objects.filter(kind=dashboard.FIGURES_JOB).count() == 1
    run_job(project, dashboard.FIGURES_JOB, dashboard.run_figures_job)
    first = dashboard.page_aggregates(project)
    assert not first["updating"] and first["computing"] is None
    Job.objects.filter(kind=dashboard.FIGURES_JOB).delete()  # long done (the next job is not held back by it)
    label(anna, project, pairs[0], "aligned")
    for _ in range(3):
        again = dashboard.page_aggregates(project)
        assert again["updating"] and again["as_of"] == first["as_of"] and again["progress"] == first["progress"]
    assert Job.objects.filter(kind=dashboard.FIGURES_JOB).count() == 1
    run_job(project, dashboard.FIGURES_JOB, dashboard.run_figures_job)
    now = dashboard.page_aggregates(project)
    assert not now["updating"] and now["progress"]["votes"] == first["progress"]["votes"] + 1
    # data changing all the time: the next job waits until REFRESH_EVERY_S after the last one finished
    label(anna, project, pairs[1], "aligned")
    assert dashboard.page_aggregates(project)["updating"]
    assert Job.objects.filter(kind=dashboard.FIGURES_JOB).count() == 1
    Job.objects.filter(kind=dashboard.FIGURES_JOB).update(finished_at=timezone.now() - timedelta(seconds=61))
    assert dashboard.page_aggregates(project)["updating"]
    assert Job.objects.filter(kind=dashboard.FIGURES_JOB, status=Status.QUEUED).count() == 1
