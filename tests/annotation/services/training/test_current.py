"""The training set now (``training.current``): built once per state of the project's data and kept in the
cache; anything the set is computed from changes the state, so the next reader builds it again."""
from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import (
    ArticleCompletion,
    CandidatePair,
    Job,
    Label,
    Membership,
    Sentence,
    Split,
    Status,
    indices_key,
)
from annotation.services.review import adjudication, review_state
from annotation.services.training import current, dataset
from tests import factories, labels

pytestmark = pytest.mark.django_db


@pytest.fixture
def counted_builds(monkeypatch):
    cache.clear()
    built = []
    real = dataset.training_set
    monkeypatch.setattr(dataset, "training_set", lambda p: built.append(p.pk) or real(p))
    return built


def test_the_set_is_built_once_while_the_data_stay_the_same(project, completed, counted_builds):  # noqa: F811
    first = current.current_training_set(project)
    again = current.current_training_set(project)
    assert counted_builds == [project.pk] and again.snapshot == first.snapshot
    assert current.training_summary(project).snapshot == first.snapshot and counted_builds == [project.pk]


def test_a_label_a_completion_or_an_exclusion_changes_the_state(project, users, completed):  # noqa: F811
    states = [current.data_state(project)]
    Label.objects.filter(annotator=users["anna"]).first().delete()
    states.append(current.data_state(project))
    ArticleCompletion.objects.all().delete()
    states.append(current.data_state(project))
    Membership.objects.filter(project=project, user=users["anna"]).update(excluded_at="2026-01-01T00:00:00Z")
    states.append(current.data_state(project))
    project.config = {**project.config, "note": "changed"}
    project.save()
    states.append(current.data_state(project))
    assert len(set(states)) == len(states)
    assert current.data_state(project) == states[-1]  # nothing changed: the same state


def test_a_change_rebuilds_the_set_and_the_summary_follows(project, completed, counted_builds):  # noqa: F811
    before = current.training_summary(project)
    assert before.refusal is None and counted_builds == [project.pk]
    ArticleCompletion.objects.all().delete()
    after = current.training_summary(project)
    assert counted_builds == [project.pk, project.pk] and after.refusal is not None
    held = cache.get(f"training-set:{project.pk}")  # the project's newest set only
    assert held[0] == current.data_state(project)


def test_every_kind_of_change_to_the_set_moves_the_cheap_state(project, users, completed):  # noqa: F811
    """Edits, gold, splits, imports and the scheme move the state, read without joining the project's pairs
    or sentences (the old state counted them: 0.6 s a Models page view at 1M pairs)."""
    states = [current.data_state(project)]

    def moved(step: str) -> None:
        now = current.data_state(project)
        assert now not in states, f"{step}: the state did not move"
        states.append(now)

    label = Label.objects.filter(annotator=users["anna"]).first()
    labels.edit_label(users["anna"], label, value="partial" if label.value != "partial" else "aligned")
    moved("a label edited")
    adjudication.decide(label.pair, "aligned", users["rita"])
    moved("an adjudication")
    adjudication.decide(label.pair, "not-aligned", users["rita"])
    moved("an adjudication changed")
    split = Split.objects.filter(article__project=project).first()
    split.name = "dev" if split.name != "dev" else "test"
    split.save()
    moved("a split changed")
    article = factories.make_article(project, "Imported", {"adv": [["One long sentence here."]], "ele": [["One."]]})
    moved("an import (sentences, article)")
    c, s = article.documents.order_by("rank")
    CandidatePair.objects.create(article=article, complex_document=c, simple_document=s,
                                 complex_key=indices_key([0]), simple_key=indices_key([0]))
    moved("a new candidate pair")
    with CaptureQueriesContext(connection) as queries:
        current.data_state(project)
    pair_reads = [q["sql"] for q in queries if CandidatePair._meta.db_table in q["sql"]
                  or Sentence._meta.db_table in q["sql"]]
    assert pair_reads and not [sql for sql in pair_reads if "JOIN" in sql.upper() or "COUNT" in sql.upper()]
    assert len(queries) <= 12


def test_a_big_projects_models_page_says_being_computed_and_one_job_builds_the_set(
        project, users, completed, counted_builds, client, monkeypatch):  # noqa: F811
    """At 20,000 article pairs building the set took 16 s of the page's answer: from LAZY_ARTICLES articles the
    page starts one job (not one a view) and shows the figures once the job has kept them."""
    monkeypatch.setattr(current, "LAZY_ARTICLES", 1)
    client.force_login(users["rita"])
    page = f"/projects/{project.pk}/models/"
    for _ in range(2):
        shown = client.get(page).content.decode()
        assert 'id="training-computing"' in shown and 'id="exhaustive"' not in shown
    [job] = Job.objects.filter(project=project, kind=current.SUMMARY_JOB)
    assert counted_builds == []  # nothing built while answering
    current.run_summary_job(job.pk)
    job.refresh_from_db()
    assert job.status == Status.SUCCEEDED and counted_builds == [project.pk]
    shown = client.get(page).content.decode()
    assert 'id="training-computing"' not in shown and 'id="exhaustive">1 / 0 / 0<' in shown
    assert Job.objects.filter(kind=current.SUMMARY_JOB).count() == 1 and counted_builds == [project.pk]


def test_a_restarted_server_shows_the_kept_summary_and_after_a_change_says_it_is_updating(
        project, users, completed, counted_builds, client, monkeypatch):  # noqa: F811
    """Issue 37: the summary is kept in the database too, so the Models page after a restart shows it without a
    job; after a change it shows the summary of the state before, saying so, while one job builds the new one."""
    monkeypatch.setattr(review_state, "REFRESH_EVERY_S", 0)  # a job after every change
    monkeypatch.setattr(current, "LAZY_ARTICLES", 1)
    client.force_login(users["rita"])
    page = f"/projects/{project.pk}/models/"
    client.get(page)
    [job] = Job.objects.filter(project=project, kind=current.SUMMARY_JOB)
    current.run_summary_job(job.pk)
    cache.clear()  # a restarted server
    shown = client.get(page).content.decode()
    assert 'id="exhaustive">1 / 0 / 0<' in shown and 'id="training-as-of"' not in shown
    assert Job.objects.filter(kind=current.SUMMARY_JOB).count() == 1 and counted_builds == [project.pk]
    project.config = {**project.config, "note": "changed"}  # any change of what the set is computed from
    project.save()
    for _ in range(2):
        shown = client.get(page).content.decode()
        assert 'id="training-as-of"' in shown and 'id="exhaustive">1 / 0 / 0<' in shown
    [job] = Job.objects.filter(kind=current.SUMMARY_JOB, status=Status.QUEUED)
    current.run_summary_job(job.pk)
    shown = client.get(page).content.decode()
    assert 'id="training-as-of"' not in shown and counted_builds == [project.pk, project.pk]
