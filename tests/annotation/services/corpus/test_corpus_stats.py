"""Corpus statistics (``corpus/corpus_stats.py``): counts per level and words per sentence of one project, and the
job that records them (errors as data on the row)."""
from __future__ import annotations

import pytest

from annotation.models import Job, Status
from annotation.services.corpus import corpus_stats
from tests import factories

pytestmark = pytest.mark.django_db


def test_levels_are_counted_with_their_words_per_sentence_and_other_projects_left_out(project, users):
    article = factories.make_article(project, "Bees", {"adv": [["Honey bees dance at dawn.", "They tell the way."]],
                                                       "ele": [["Bees dance."]]})
    factories.make_article(project, "Owls", {"adv": [["Owls hunt at night."]]})
    c, s = article.documents.order_by("rank")
    factories.make_pair(article=article, complex_document=c, simple_document=s, complex_key="0", simple_key="0")
    factories.make_article(factories.make_project("Elsewhere"), "X", {"adv": [["Not counted here at all."]]})
    assert corpus_stats.compute_stats(project.pk) == {
        "articles": 2, "documents": 3, "sentences": 4, "candidate_pairs": 1,
        "levels": {"adv": {"documents": 2, "sentences": 3, "words": 13, "words_per_sentence": 4.33},
                   "ele": {"documents": 1, "sentences": 1, "words": 2, "words_per_sentence": 2.0}},
    }


def test_an_empty_project_or_a_document_without_sentences_divides_by_nothing(project):
    assert corpus_stats.compute_stats(project.pk) == {"articles": 0, "documents": 0, "sentences": 0,
                                                       "candidate_pairs": 0, "levels": {}}
    factories.make_article(project, "Empty", {"adv": []})
    assert corpus_stats.compute_stats(project.pk)["levels"] == {
        "adv": {"documents": 1, "sentences": 0, "words": 0, "words_per_sentence": 0.0}}


def test_the_job_records_the_statistics_once(project):
    factories.make_article(project, "Owls", {"adv": [["Owls hunt at night."]]})
    job = Job.objects.create(project=project, kind="corpus-stats")
    corpus_stats.run_stats_job(job.pk)
    job.refresh_from_db()
    assert job.status == Status.SUCCEEDED and job.result == corpus_stats.compute_stats(project.pk)
    finished = job.finished_at
    corpus_stats.run_stats_job(job.pk)  # delivered again: not claimed twice
    assert Job.objects.get(pk=job.pk).finished_at == finished

