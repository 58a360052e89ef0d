"""Corpus import (``corpus/importing/__init__.py``): the format told by the file names, every file checked and
every article parsed before anything is written, then all or nothing, with progress, a checkpoint between
batches, the audit record and the result's summary. (Each format: ``formats/test_<format>.py``.)"""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, Article, AuditEvent
from annotation.services.corpus.importing import (
    CorpusImportError,
    ImportRequest,
    bytes_inputs,
    detect_format,
    format_names,
    import_files,
    import_inputs,
)
from tests.annotation.services.conftest import corpus_counts
from tests.annotation.views.test_api_import import jsonl

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def import_dir(settings, tmp_path):
    settings.IMPORT_DIR = tmp_path / "imports"


@pytest.mark.parametrize("names,fmt", [
    (["Bees-adv.txt", "Bees-ele.txt"], "levels"),
    (["a.jsonl", ".DS_Store", "__MACOSX/a.jsonl"], "jsonl"),
    (["train.src", "train.dst"], "parallel"),
    (["dev.tsv"], "wiki-manual"),
])
def test_the_format_is_told_by_the_names_and_hidden_files_do_not_count(names, fmt):
    assert detect_format(names) == fmt and fmt in format_names()


@pytest.mark.parametrize("names,message", [
    ([], "no files to import"),
    ([".hidden"], "no files to import"),
    (["notes.docx"], "notes.docx: unknown extension .docx; known extensions: "),
    (["a.jsonl", "b.tsv"], "mixed formats: jsonl (a.jsonl); wiki-manual (b.tsv); import one format at a time"),
])
def test_no_unknown_or_mixed_files_are_refused(names, message):
    with pytest.raises(CorpusImportError) as err:
        detect_format(names)
    assert message in str(err.value)


def test_an_import_reports_its_progress_and_is_recorded_with_its_actor(project, users):
    seen: list[tuple[float, str]] = []
    result = import_files(project, [("in.jsonl", jsonl(3))], actor=users["rita"], source="a test",
                          progress=lambda fraction, message: seen.append((fraction, message)))
    assert result.describe() == "3 articles, 6 documents, 9 sentences, 3 pairs (jsonl)"
    assert len(result.article_ids) == 3 and result.gold_summary()
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and seen[-1][1] == "written 3 of 3 articles"
    event = AuditEvent.objects.get(action="import")
    assert (event.actor, event.target, event.details["articles"], event.details["format"]) == (
        users["rita"], "a test", 3, "jsonl")


def test_a_bad_record_anywhere_imports_nothing_and_names_every_problem(project):
    bad = jsonl(2) + b'{"id": "x", "complex": {"paragraphs": 3}}\n' + b"not json\n"
    with pytest.raises(CorpusImportError) as err:
        import_files(project, [("in.jsonl", bad)])
    assert [line.split(":")[1] for line in str(err.value).splitlines()] == ["3", "4"]
    assert corpus_counts()["articles"] == 0 and not AuditEvent.objects.filter(action="import").exists()


def test_a_checkpoint_that_stops_the_import_after_two_batches_leaves_nothing(project, monkeypatch):
    import annotation.services.corpus.importing as importing

    monkeypatch.setattr(importing, "BATCH_ARTICLES", 1)  # an article a batch: the checkpoint runs between them
    calls: list[int] = []

    def checkpoint() -> None:  # a job cancelled while its third batch is about to be written
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("cancelled")

    with pytest.raises(RuntimeError, match="cancelled"):
        import_inputs(project, bytes_inputs([("in.jsonl", jsonl(3))]), ImportRequest(), checkpoint=checkpoint)
    assert corpus_counts()["articles"] == 0 and not AuditEvent.objects.filter(action="import").exists()


def test_articles_already_there_are_refused_or_skipped_as_asked(project):
    import_files(project, [("in.jsonl", jsonl(2))])
    with pytest.raises(CorpusImportError, match="article 'a0' already exists"):
        import_files(project, [("more.jsonl", jsonl(3))])
    result = import_files(project, [("more.jsonl", jsonl(3))], on_conflict="skip")
    assert result.articles == 1 and any("a0" in w for w in result.warnings)
    assert sorted(Article.objects.values_list("title", flat=True)) == ["a0", "a1", "a2"]


def test_links_imported_as_predictions_belong_to_one_run_of_the_import(project):
    result = import_files(project, [("in.jsonl", jsonl(2))], gold_meaning="predictions")
    run = AlignmentRun.objects.get(pk=result.run)
    assert result.gold == {"predictions": 2} and run.predictions.count() == 2 and run.status == "succeeded"
