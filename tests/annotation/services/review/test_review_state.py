"""The dashboard's cached figures (issue 37) equal a fresh computation after every kind of change: a label
given, edited or removed, an adjudication, a completion and its removal, an exclusion, an import, a run
starting and finishing, and a settings change — each moves ``review_state.state``."""
from __future__ import annotations

import pytest
from django.core.cache import cache

from annotation.models import AlignmentRun, CandidatePair, Status, indices_key
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


def test_the_cached_figures_follow_every_change(project, users, crowd):  # noqa: F811
    cache.clear()
    anna, bob, _ = crowd
    pairs = make_pairs(project, 4)
    article = pairs[0].article
    complex_doc, simple_doc = article.documents.order_by("rank")
    steps = []

    def check(step: str) -> None:
        now = review_state.state(project)
        assert now not in steps, f"{step}: the state did not move"
        steps.append(now)
        assert cached(project) == fresh(project), step
        assert cached(project) == fresh(project), f"{step} (read again from the cache)"

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
