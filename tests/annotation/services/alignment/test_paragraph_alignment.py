"""Automatic paragraph links and the sentence candidates within them (``alignment/paragraph_alignment.py``): the
project's settings validated, links computed and stored, candidates regenerated without duplicates, and the
project job that recomputes every uncorrected document pair (skipping, and naming, those too large)."""
from __future__ import annotations

import re

import pytest

from annotation.models import AlignmentRun, Article, CandidatePair, Job, ParagraphAlignment, Prediction, Status
from annotation.services.alignment import paragraph_alignment as pa
from annotation.services.editing import paragraph_correction as pc
from annotation.services.editing.article_alignment import resolve_documents
from tests import factories
from tests.annotation.services.editing.test_paragraph_correction import COMPLEX, SIMPLE, active_links, candidates

pytestmark = pytest.mark.django_db


@pytest.fixture
def article(project):
    """Three paragraphs a side, each simple paragraph a simplification of the complex one beside it."""
    return factories.make_article(project, "News", {"adv": COMPLEX, "int": SIMPLE})


@pytest.fixture
def docs(article):
    return resolve_documents(article, None, None)


def test_the_default_settings_and_what_they_mean(project):
    settings = pa.settings_for(project)
    assert settings == pa.ParagraphSettings() and settings.inline_similarity == "charngram"
    assert settings.regenerates_inline and settings.engine_thresholds() is None
    project.config = {"paragraph_alignment": {"similarity": "sbert", "variant": "wiki",
                                              "thresholds": {"tau1": 0.5}},
                      "candidates": "selected", "candidate_selection": {"measures": ["sbert"], "k": 2}}
    neural = pa.settings_for(project)
    assert neural.inline_similarity == "charngram" and not neural.regenerates_inline and neural.k == 2
    assert type(neural.engine_thresholds()).__name__ == "WikiThresholds"


@pytest.mark.parametrize("config,message", [
    ({"paragraph_alignment": ["sbert"]}, "project config paragraph_alignment: must be an object"),
    ({"paragraph_alignment": {"similarity": "magic"}}, "paragraph_alignment: similarity: unknown similarity 'magic'"),
    ({"paragraph_alignment": {"variant": "books"}}, "paragraph_alignment: variant: unknown variant 'books'"),
    ({"candidate_selection": {"measures": []}}, "candidate_selection: measures: must be a non-empty list of"),
    ({"candidate_selection": {"k": True}}, "candidate_selection: k: must be an int, got True"),
])
def test_a_bad_setting_is_refused_naming_its_key(project, config, message):
    project.config = config
    with pytest.raises(pa.ParagraphSettingsError, match=re.escape(message)):
        pa.settings_for(project)
    with pytest.raises(pa.ParagraphSettingsError):
        pa.start_paragraph_job(project)  # refused before a job exists
    assert not Job.objects.exists()


def test_computed_links_are_stored_once_and_a_manual_link_marks_the_pair_corrected(article, docs):
    links = pa.compute_auto_links(*docs, pa.settings_for(article.project))
    assert [(link.complex, link.simple) for link in links] == [(0, 0), (1, 1), (2, 2)]
    assert all(0 < link.score <= 1 for link in links)
    assert pa.store_auto_links(*docs, links) == 3 and pa.store_auto_links(*docs, links) == 3
    assert pa.stored_links(*docs).count() == 3 and not pa.is_corrected(*docs)
    pa.stored_links(*docs).filter(complex_paragraph__index=2).update(active=False)
    assert pa.is_corrected(*docs)


def test_a_document_without_sentences_has_no_links(project):
    empty = factories.make_article(project, "Empty", {"adv": [], "int": [["One."]]})
    assert pa.compute_auto_links(*resolve_documents(empty, None, None), pa.ParagraphSettings()) == []


def test_the_candidate_run_is_made_once_on_first_use(project):
    assert pa.candidate_run(project, create=False) is None
    run = pa.candidate_run(project)
    assert run.status == Status.SUCCEEDED and run.method == pa.CANDIDATE_RUN_METHOD and pa.candidate_run(project) == run
    assert AlignmentRun.objects.count() == 1


def test_a_bad_config_names_the_valid_values(article):
    article.project.config = {"candidates": "everything"}
    with pytest.raises(pa.ParagraphSettingsError, match="choose one of: all-in-paragraphs, selected"):
        pa.settings_for(article.project)
    article.project.config = {"paragraph_alignment": {"variant": "wiki", "thresholds": {"tau9": 1}}}
    with pytest.raises(pa.ParagraphSettingsError, match="must map tau1, tau2, tau3, tau4, tau5 to numbers") as refused:
        pa.settings_for(article.project)
    assert refused.value.code == "bad_project_config"


def test_the_paragraph_settings_are_read_from_their_declarations_with_the_variants_thresholds(article):
    """Three keys declared with the Option schema (PARAGRAPH_SETTINGS_OPTIONS); the thresholds must be the chosen
    variant's (the one rule across options), and every bad key is named at once."""
    article.project.config = {"paragraph_alignment": {"variant": "wiki", "thresholds": {"tau1": 0.5}},
                              "candidate_selection": {"k": 2}}
    settings = pa.settings_for(article.project)
    assert (settings.variant, settings.thresholds, settings.similarity) == ("wiki", {"tau1": 0.5}, "charngram")
    assert (settings.candidates, settings.measures, settings.k) == ("all-in-paragraphs", ("charngram", "tfidf"), 2)
    assert pa.settings_for(type(article.project)(config={})) == pa.ParagraphSettings()
    article.project.config = {"paragraph_alignment": {"variant": "newsela", "thresholds": {"tau1": True}}}
    with pytest.raises(pa.ParagraphSettingsError, match="tau5 to numbers \\(the newsela variant's\\)"):
        pa.settings_for(article.project)
    article.project.config = {"paragraph_alignment": {"similarity": "bleu"}, "candidate_selection": {"k": 0, "x": 1},
                              "candidates": "all-in-paragraphs"}
    with pytest.raises(pa.ParagraphSettingsError) as refused:
        pa.settings_for(article.project)
    message = str(refused.value)
    assert "paragraph_alignment: similarity: unknown similarity 'bleu'" in message
    assert "candidate_selection: k: must be >= 1, got 0; x: unknown option" in message


def test_the_project_job_recomputes_uncorrected_document_pairs_and_keeps_corrected_ones(users, project, article, docs):
    other = factories.make_article(project, "Other news", {"adv": COMPLEX, "int": SIMPLE})
    other_docs = resolve_documents(other, None, None)
    pc.save_paragraph_links(users["rita"], article, *docs, [{"complex": 0, "simple": 0}])
    job = Job.objects.create(project=project, kind="paragraph-alignment", params={"candidates": True})
    pa.run_job(job.pk)
    job.refresh_from_db()
    assert job.status == Status.SUCCEEDED, job.error
    assert job.result["document_pairs"] == 2 and job.result["recomputed"] == 1 and job.result["kept_corrected"] == 1
    assert active_links(docs) == {(0, 0)}
    assert active_links(other_docs) == {(0, 0), (1, 1), (2, 2)}
    assert len(candidates(project, other_docs)) == 4 + 4 + 6


def test_a_failing_job_stores_its_error(project):
    job = Job.objects.create(project=project, kind="regenerate-candidates", params={"article": 999999, "complex": 1, "simple": 2})
    with pytest.raises(Article.DoesNotExist):
        pa.run_job(job.pk)
    job.refresh_from_db()
    assert job.status == Status.FAILED and "DoesNotExist" in job.error


def test_regenerating_never_creates_a_pair_that_exists_it_adds_the_candidate_runs_prediction(users, article, docs):
    crf = AlignmentRun.objects.create(project=article.project, method="crf", status=Status.SUCCEEDED)
    predicted = factories.make_pair(crf, article=article, complex_document=docs[0], simple_document=docs[1],
                                    complex_key="0", simple_key="0", score=0.93, predicted_label="aligned", origin="model")
    pairs_before = CandidatePair.objects.count()
    saved = pc.save_paragraph_links(users["rita"], article, *docs, [{"complex": 0, "simple": 0}])
    assert saved["candidates"]["pairs"] == 4 and saved["candidates"]["created"] == 3  # (0, 0) existed
    assert CandidatePair.objects.count() == pairs_before + 3
    assert CandidatePair.objects.filter(complex_document=docs[0], simple_document=docs[1], complex_key="0",
                                        simple_key="0").count() == 1
    run = pa.candidate_run(article.project)
    assert set(Prediction.objects.filter(pair=predicted).values_list("run__method", flat=True)) == {"crf", "candidates"}
    predicted.refresh_from_db()
    assert predicted.origin == "model" and predicted.predicted_label == "aligned"
    # and again: nothing new at all
    again = pa.regenerate_candidates(article, *docs)
    assert again["created"] == 0 and CandidatePair.objects.count() == pairs_before + 3
    assert Prediction.objects.filter(run=run).count() == 4


def test_the_project_job_skips_a_document_pair_over_the_cell_limit_and_says_so(users, project, article, docs, settings):
    """7 × 6 sentences fit; 14 × 12 = 168 do not (limit 100): that pair keeps its links and gets no candidates."""
    settings.ARTICLE_MAX_SIMILARITY_CELLS = 100
    big = factories.make_article(project, "Long news", {"adv": COMPLEX + COMPLEX, "int": SIMPLE + SIMPLE})
    big_docs = resolve_documents(big, None, None)
    n, m = (d.sentences.count() for d in big_docs)
    assert n * m > 100 >= 7 * 6, (n, m)
    kept = ParagraphAlignment.objects.create(complex_paragraph=big_docs[0].paragraphs.get(index=0),
                                             simple_paragraph=big_docs[1].paragraphs.get(index=1),
                                             source=ParagraphAlignment.AUTO, score=0.5)
    job = Job.objects.create(project=project, kind="paragraph-alignment", params={"candidates": True})
    pa.run_job(job.pk)
    job.refresh_from_db()
    assert job.status == Status.SUCCEEDED, job.error
    result = job.result
    assert (result["document_pairs"], result["recomputed"], result["skipped"]) == (2, 1, 1)
    assert result["skipped_pairs"] == [{
        "article": big.pk, "title": "Long news", "complex": "adv", "simple": "int",
        "reason": f"comparing {n} × {m} sentences ({n * m}) is too much for one document pair; its paragraph links "
                  "and candidates were left as they were; the limit is ARTICLE_MAX_SIMILARITY_CELLS=100"}]
    assert result["message"] == ("1 document pair(s) skipped: more complex × simple sentences than "
                                 "ARTICLE_MAX_SIMILARITY_CELLS=100")
    assert list(pa.stored_links(*big_docs)) == [kept]
    assert candidates(project, big_docs) == set()
    assert active_links(docs) == {(0, 0), (1, 1), (2, 2)}  # the small article was aligned as before
    assert len(candidates(project, docs)) == 4 + 4 + 6


def test_the_project_job_names_at_most_fifty_skipped_pairs_but_counts_them_all(project, settings):
    settings.ARTICLE_MAX_SIMILARITY_CELLS = 1
    for i in range(pa.SKIPPED_SHOWN + 2):
        factories.make_article(project, f"A{i:02d}", {"adv": [["One.", "Two."]], "int": [["Uno."]]})
    result = pa.align_project_paragraphs(project, candidates=False)
    assert result["skipped"] == 52 and result["recomputed"] == 0
    assert [s["title"] for s in result["skipped_pairs"]] == [f"A{i:02d}" for i in range(50)]
    assert not ParagraphAlignment.objects.exists()
