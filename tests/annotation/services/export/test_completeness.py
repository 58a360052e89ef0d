"""What the gold formats write so that an import gets the same article back (``export/completeness.py``): the
manifest's re-import guide and its README section, the complete document pairs under the export's gold policy,
and each pair's sentences with their paragraphs."""
from __future__ import annotations

import random

import pytest

from annotation.models import AlignmentRun, ArticleCompletion, Status
from annotation.services.editing import article_alignment as aa
from annotation.services.editing import completion
from annotation.services.export import ExportOptions
from annotation.services.export import completeness as c
from annotation.services.export.completeness import DocumentPairs, among, by_document_pair
from annotation.services.export.records import ArticleBatch
from tests.annotation.services.export.formats.helpers import batch, record

BATCH = batch([])
COMPLEX_DOC, SIMPLE_DOC = BATCH.documents[1], BATCH.documents[2]


def test_the_guide_lists_only_the_formats_read_back_with_their_counts():
    guide = c.reimport_guide(["tsv", "parallel", "jsonl"], {"jsonl": (3, 2), "tsv": (3, 3, {
        "sidecar": "wiki-manual/gold_sidecar.json", "tsv_alone": {"read_back_complete": 1, "sparse_read_back_complete": 1}})})
    assert list(guide) == ["tsv", "jsonl"]  # parallel is a training output: not read back as gold
    assert guide["jsonl"]["folder"] == "jsonl" and guide["jsonl"]["format"] == "jsonl"
    assert guide["jsonl"]["gold_meaning"] == "sparse" and guide["jsonl"]["complete_pairs"] == {
        "written": 3, "read_back_complete": 2}
    assert guide["tsv"]["format"] == "wiki-manual" and guide["tsv"]["complete_pairs"]["sidecar"].endswith("sidecar.json")
    assert "complete_pairs" not in c.reimport_guide(["articles"])["articles"]


def test_the_readme_says_how_each_format_comes_back():
    guide = c.reimport_guide(["tsv", "jsonl", "articles"], {"jsonl": (3, 2), "tsv": (2, 2, {
        "sidecar": None, "tsv_alone": {"read_back_complete": 2, "sparse_read_back_complete": 1}})})
    text = c.reimport_readme(guide)
    assert text.startswith("\nImporting this export back") and text.endswith("\n")
    jsonl = next(line for line in text.splitlines() if line.startswith("  jsonl (jsonl/, import format jsonl)"))
    assert jsonl.endswith("Complete document pairs: 3 written, 2 read back complete.")
    tsv = next(line for line in text.splitlines() if line.startswith("  tsv (wiki-manual/"))
    assert "(no sidecar needed; the TSV alone: 2 read back complete, 1 of them sparse document pairs" in tsv
    articles = next(line for line in text.splitlines() if line.startswith("  articles"))
    assert "Complete document pairs" not in articles


def test_sentence_fields_give_each_sides_sentences_and_paragraphs():
    assert c.sentence_fields(COMPLEX_DOC, SIMPLE_DOC, (1,), (1, 2), "complex", "simple") == {
        "complex_sentences": ["They live everywhere."], "complex_paragraphs": [0],
        "simple_sentences": ["They hear very well.", "They live everywhere."], "simple_paragraphs": [0, 1]}
    assert c.sentence_fields(None, SIMPLE_DOC, (0,), (9,), "complex") == {"complex_sentences": [],
                                                                         "complex_paragraphs": [0]}
    assert c.paragraph_positions(SIMPLE_DOC) == [0, 0, 1] and c.paragraph_positions(None) == []


def test_pair_fields_say_whether_the_document_pair_is_complete_and_each_documents_size():
    fields = c.pair_fields(BATCH, record([0], [0, 1]), {(1, 2)})
    assert fields["complete"] is True and (fields["complex_sentence_count"], fields["simple_sentence_count"]) == (2, 3)
    assert c.pair_fields(BATCH, record([0], [0]), set())["complete"] is False


def test_a_complete_document_pair_without_a_record_is_an_empty_group():
    r = record([0], [0])
    assert c.by_document_pair(BATCH, [r], set()) == {(1, 2): [r]}
    assert c.by_document_pair(BATCH, [], {(1, 2), (7, 8)}) == {(1, 2): []}  # (7, 8) is not in this batch


@pytest.mark.django_db
def test_complete_documents_follow_the_gold_policy_and_auto_exports_have_none(project, users):
    from tests import factories

    article = factories.make_article(project, "Owls", {"adv": [["O0."]], "int": [["P0."]]})
    docs = aa.resolve_documents(article, None, None)
    aa.save_links(users["anna"], article, *docs, None, [{"complex": 0, "simple": 0}])
    completion.mark_complete(users["anna"], article, *docs)
    assert ArticleCompletion.objects.count() == 1
    key = (docs[0].pk, docs[1].pk)
    assert c.complete_documents(project, ExportOptions.parse({"label_policy": "majority-or-single"})) == {key}
    assert c.complete_documents(project, ExportOptions.parse({"label_policy": "majority"})) == set()  # one annotator is no majority
    run = AlignmentRun.objects.create(project=project, method="jaccard", status=Status.SUCCEEDED)
    assert c.complete_documents(project, ExportOptions.parse({"kind": "auto", "runs": [run.pk]})) == set()


def test_an_indexed_set_finds_the_same_pairs_as_a_scan_of_the_set():
    """Issue 37: the writers look up an article's complete document pairs by its documents, not by scanning
    the project's set per article; the pairs found are the scan's."""
    rng = random.Random(37)
    pairs = {(rng.randrange(60), rng.randrange(60)) for _ in range(300)}
    indexed = DocumentPairs(pairs)
    assert indexed == pairs
    for _ in range(200):
        documents = {d: {} for d in rng.sample(range(60), rng.randint(0, 8))}
        assert sorted(among(indexed, documents)) == sorted(among(pairs, documents)) == sorted(
            (c, s) for c, s in pairs if c in documents and s in documents)


def test_a_complete_document_pair_without_records_gets_an_empty_group_among_indexed_pairs():
    batch = ArticleBatch(article_id=1, title="Owls", split="train", documents={1: {}, 2: {}, 3: {}}, records=[])
    assert by_document_pair(batch, [], DocumentPairs({(1, 2), (1, 9), (3, 2)})) == {(1, 2): [], (3, 2): []}
    assert not DocumentPairs() and among(DocumentPairs(), batch.documents) == []
