"""What imported gold means (issue 18 §3): exhaustive, sparse (the default) or predictions."""
from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from annotation.models import Adjudication, AlignmentRun, Article, AuditEvent, Label, Prediction
from annotation.services.corpus.importing import CorpusImportError, import_files
from annotation.services.review import adjudication, queue_serving
from annotation.services.review.exhaustive import exhaustive_articles, exhaustive_pairs

RECORDS = [
    {"id": "A", "complex": {"paragraphs": [["C0.", "C1."]]}, "simple": {"paragraphs": [["S0.", "S1."]]},
     "gold": [[0, 0], [1, 1]], "gold_labels": ["aligned", "partial"]},
    {"id": "B", "complex": {"paragraphs": [["C0.", "C1."]]}, "simple": {"paragraphs": [["S0."]]}, "gold": [[1, 0]]},
    {"id": "C", "complex": {"paragraphs": [["C0."]]}, "simple": {"paragraphs": [["S0."]]}},  # no gold stated
]


def data() -> bytes:
    return "".join(json.dumps(r) + "\n" for r in RECORDS).encode()


def test_sparse_is_the_default_no_article_complete_no_tests_no_aligned_invented(project):
    result = import_files(project, [("onestop.jsonl", data())])
    assert result.gold_meaning == "sparse"
    assert sorted(Adjudication.objects.values_list("value", flat=True)) == ["aligned", "aligned-or-partial", "partial"]
    assert exhaustive_pairs(project) == [] and exhaustive_articles(project) == set()
    assert not queue_serving.test_pairs(project).exists()
    assert result.gold_summary() == ("3 links as sparse gold (1 aligned, 1 partial; Task 1 only: 1 without a kind), "
                                     "0 articles complete, 0 test questions")
    assert Article.objects.get(title="B").meta["gold_import"] == {"meaning": "sparse", "test_questions": False}
    event = AuditEvent.objects.get(action="import")
    assert event.details["gold_meaning"] == "sparse" and event.details["gold_summary"] == result.gold_summary()


def test_exhaustive_gold_counts_the_stated_article_pairs_as_complete(project):
    result = import_files(project, [("full.jsonl", data())], gold_meaning="exhaustive")
    assert exhaustive_articles(project) == set(Article.objects.filter(title__in=["A", "B"]).values_list("pk", flat=True))
    assert all(p.imported for p in exhaustive_pairs(project))
    assert result.gold["complete"] == 2 and "2 articles complete" in result.gold_summary()
    assert not queue_serving.test_pairs(project).exists()  # still no test questions unless asked


def test_test_questions_only_when_asked(project):
    result = import_files(project, [("t.jsonl", data())], test_questions=True)
    assert queue_serving.test_pairs(project).count() == 3 and result.gold_summary().endswith("3 test questions")


def test_predictions_become_a_run_named_after_the_file_and_no_gold(project):
    result = import_files(project, [("aligner-output.jsonl", data())], gold_meaning="predictions")
    run = AlignmentRun.objects.get(pk=result.run)
    assert (run.method, run.params["file"], run.status, run.pair_count) == ("import", "aligner-output.jsonl", "succeeded", 3)
    assert not Adjudication.objects.exists() and exhaustive_pairs(project) == []
    assert sorted(Prediction.objects.filter(run=run).values_list("predicted_label", flat=True)) == ["aligned", "aligned", "partial"]
    assert result.gold_summary().startswith("3 links as predictions of an alignment run")


def test_an_unknown_meaning_is_refused(project):
    with pytest.raises(CorpusImportError) as caught:
        import_files(project, [("x.jsonl", data())], gold_meaning="complete")
    assert "unknown gold_meaning 'complete'" in str(caught.value.problems[0])


def test_votes_that_disagree_with_imported_gold_appear_in_adjudication_with_both(project, users):
    import_files(project, [("s.jsonl", data())])
    partial = Adjudication.objects.get(value="partial").pair
    unknown = Adjudication.objects.get(value="aligned-or-partial").pair
    aligned = Adjudication.objects.get(value="aligned").pair
    Label.objects.create(pair=partial, annotator=users["anna"], value="aligned", seconds=20)  # disagrees
    Label.objects.create(pair=unknown, annotator=users["anna"], value="partial", seconds=20)  # agrees: a link
    Label.objects.create(pair=aligned, annotator=users["anna"], value="aligned", seconds=20)  # agrees
    assert adjudication.queue_pair_ids(project) == [partial.pk]
    [item] = adjudication.review_queue(project)
    assert item["gold"]["value"] == "partial" and item["gold"]["provenance"] == "imported"
    assert [v["value"] for v in item["votes"]] == ["aligned"]
    adjudication.decide(partial, "aligned", users["rita"])
    assert adjudication.queue_pair_ids(project) == []


def test_the_command_asks_for_the_meaning_and_says_what_was_stored(project, tmp_path, capsys):
    path = tmp_path / "gold.jsonl"
    path.write_bytes(data())
    call_command("import_corpus", project.name, str(path), "--gold-meaning", "exhaustive", "--test-questions")
    out = capsys.readouterr().out
    assert "gold: 3 links as exhaustive gold (1 aligned, 1 partial; Task 1 only: 1 without a kind), " \
           "2 articles complete, 3 test questions" in out


def records(*complete) -> bytes:
    """One record per value of ``complete`` (None: the record does not say), each with two gold links."""
    out = []
    for i, flag in enumerate(complete):
        record = {"id": f"r{i}", "complex": {"paragraphs": [["C0.", "C1."]]}, "simple": {"paragraphs": [["S0.", "S1."]]},
                  "gold": [[0, 0], [1, 1]], "gold_labels": ["aligned", "partial"]}
        if flag is not None:
            record["complete"] = flag
        out.append(json.dumps(record) + "\n")
    return "".join(out).encode()


def test_the_summary_says_the_meaning_the_file_applied_not_the_one_chosen(project):
    """Issue 28 item 5: "sparse gold … 12 articles complete" when the file's articles said they were complete."""
    result = import_files(project, [("whole.jsonl", records(True, True))])  # sparse chosen (the default)
    assert result.gold_summary() == ("4 links as exhaustive gold (2 aligned, 2 partial), as the file states "
                                     "(sparse was chosen), 2 articles complete, 0 test questions")
    assert result.gold_applied == {"exhaustive": {"articles": 2, "links": 4}}
    assert AuditEvent.objects.get(action="import").details["gold_summary"] == result.gold_summary()


def test_a_file_that_mixes_meanings_is_summed_up_per_meaning(project):
    result = import_files(project, [("mixed.jsonl", records(True, False, None))], gold_meaning="exhaustive")
    assert result.gold_applied == {"exhaustive": {"articles": 2, "links": 4}, "sparse": {"articles": 1, "links": 2}}
    assert exhaustive_articles(project) == set(Article.objects.filter(title__in=["r0", "r2"]).values_list("pk", flat=True))
    assert result.gold_summary() == ("6 links as gold (3 aligned, 3 partial), as the file states per article "
                                     "(exhaustive was chosen): exhaustive in 2 articles (4 links); sparse in 1 articles "
                                     "(2 links); 2 articles complete, 0 test questions")
