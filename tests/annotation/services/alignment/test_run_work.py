"""A run's work list (``alignment.run_work``): which document pairs it aligns, in which order, and its plan
of chunks (about ``RUN_CHUNK_SENTENCES`` sentences each for a shared run, one chunk otherwise)."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, Document, Status
from annotation.services.alignment import run_work
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def articles(project):
    """Two articles with three levels (two sentences each) and one with two levels."""
    made = [factories.make_article(project, title, {level: [[f"{title} {level} {i}." for i in range(2)]]
                                                   for level in levels})
            for title, levels in (("A", ("adv", "int", "ele")), ("B", ("adv", "int", "ele")), ("C", ("adv", "ele")))]
    return made


def _run(project, **params) -> AlignmentRun:
    return AlignmentRun.objects.create(project=project, method="jaccard", status=Status.QUEUED, params=params)


def _levels(work) -> list[tuple[str, str, str]]:
    docs = Document.objects.in_bulk({d for _, c, s in work for d in (c, s)})
    return [(docs[c].article.title, docs[c].level, docs[s].level) for _, c, s in work]


def test_the_work_is_each_adjacent_pair_of_levels_of_every_article_in_order(project, articles):
    assert _levels(run_work.work_of(_run(project))) == [
        ("A", "adv", "int"), ("A", "int", "ele"), ("B", "adv", "int"), ("B", "int", "ele"), ("C", "adv", "ele")]


def test_level_pairs_and_skipped_articles_narrow_the_work(project, articles):
    run = _run(project, skip_articles=[articles[1].pk])
    run.level_pairs = [["adv", "ele"]]
    run.save()
    assert _levels(run_work.work_of(run)) == [("A", "adv", "ele"), ("C", "adv", "ele")]


def test_a_shared_run_is_cut_into_chunks_of_about_the_sentence_limit(project, articles, settings):
    settings.RUN_CHUNK_SENTENCES = 8  # two document pairs (4 sentences each) a chunk
    run = _run(project)
    chunks = run_work.plan(run, shared=True)
    assert [(c.index, len(c.work), c.sentences) for c in chunks] == [(0, 2, 8), (1, 2, 8), (2, 1, 4)]
    assert [w for c in chunks for w in c.work] == run_work.work_of(run)
    assert [c.pk for c in run_work.plan(run, shared=True)] == [c.pk for c in chunks]  # planned once


def test_a_run_level_method_has_one_chunk_and_an_empty_project_one_empty_chunk(project, articles, users):
    chunks = run_work.plan(_run(project), shared=False)
    assert [(len(c.work), c.sentences) for c in chunks] == [(5, 20)]
    empty = factories.make_project("Empty", rita="researcher")
    assert [(c.index, c.work) for c in run_work.plan(_run(empty), shared=True)] == [(0, [])]


def test_load_leaves_out_a_document_deleted_since_the_plan(project, articles):
    run = _run(project)
    chunk = run_work.plan(run, shared=False)[0]
    articles[2].documents.get(level="ele").delete()
    loaded = run_work.load(chunk)
    assert [(a.title, c.level, s.level) for a, c, s in loaded] == _levels(run_work.work_of(run))
    assert len(loaded) == 4
