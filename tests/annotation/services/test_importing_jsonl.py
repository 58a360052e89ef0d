"""The engine JSONL format (SPEC §4)."""
from __future__ import annotations

import json

import pytest

from annotation.models import Adjudication, Article, CandidatePair, Document, LabelScheme, PairSentence, Sentence
from annotation.services.importing import import_files

pytestmark = pytest.mark.django_db


def jsonl(*records: dict) -> bytes:
    return "\n".join(json.dumps(r) for r in records).encode() + b"\n"


def sentences(article_title: str, level: str) -> list[str]:
    doc = Document.objects.get(article__title=article_title, level=level)
    return list(doc.sentences.order_by("index").values_list("text", flat=True))


def test_it_keeps_pre_split_sentences_exactly_as_given(project):
    record = {"id": "a1", "complex": {"paragraphs": [["First one. Still the first.", " Spaced  "], ["Third."]]},
              "simple": {"paragraphs": [["T0."]]}}
    result = import_files(project, [("in.jsonl", jsonl(record))])
    assert (result.format, result.articles, result.documents, result.sentences, result.pairs) == ("jsonl", 1, 2, 4, 0)
    assert sentences("a1", "complex") == ["First one. Still the first.", " Spaced  ", "Third."]
    doc = Document.objects.get(article__title="a1", level="complex")
    assert [list(p.sentences.values_list("index", flat=True)) for p in doc.paragraphs.order_by("index")] == [[0, 1], [2]]


def test_it_splits_text_documents_into_paragraphs_and_sentences(project):
    record = {"id": "t", "complex": {"text": "One here. Two here.\n\nThree here."}, "simple": {"paragraphs": [["S."]]}}
    import_files(project, [("in.jsonl", jsonl(record))])
    doc = Document.objects.get(article__title="t", level="complex")
    assert doc.paragraphs.count() == 2
    assert sentences("t", "complex") == ["One here.", "Two here.", "Three here."]


def test_it_splits_text_with_the_language_given_rather_than_the_projects(project):
    record = {"id": "de", "complex": {"text": "Die Mauer fiel am 9. November 1989. Danach war alles anders."},
              "simple": {"paragraphs": [["Die Mauer fiel."]]}}
    import_files(project, [("in.jsonl", jsonl(record))], language="de")
    assert sentences("de", "complex") == ["Die Mauer fiel am 9. November 1989.", "Danach war alles anders."]


def test_it_makes_one_article_per_record_with_ranked_documents(project):
    records = [
        {"id": "a", "complex": {"paragraphs": [["A."]]}, "simple": {"paragraphs": [["a."]]}},
        {"id": 7, "complex": {"paragraphs": [["B."]], "level": 0}, "simple": {"paragraphs": [["b."]], "level": "2"}},
    ]
    import_files(project, [("in.jsonl", jsonl(*records))], source="bench")
    assert list(Article.objects.filter(project=project).values_list("title", "source")) == [("a", "bench"), ("7", "bench")]
    assert list(Document.objects.filter(article__title="a").values_list("level", "rank")) == [("complex", 0), ("simple", 1)]
    assert list(Document.objects.filter(article__title="7").values_list("level", "rank")) == [("0", 0), ("2", 1)]


def test_gold_links_become_imported_pairs_adjudicated_as_aligned(project):
    record = {"id": "g", "complex": {"paragraphs": [["C0.", "C1."], ["C2."]]},
              "simple": {"paragraphs": [["S0."], ["S1."]]}, "gold": [[0, 0], [2, 1], [2, 1]]}
    result = import_files(project, [("in.jsonl", jsonl(record))])
    assert result.pairs == 2
    pairs = list(CandidatePair.objects.order_by("complex_key"))
    assert [(p.complex_key, p.simple_key, p.origin, p.run_id) for p in pairs] == [("0", "0", "import", None), ("2", "1", "import", None)]
    assert pairs[1].complex_document.level == "complex" and pairs[1].simple_document.level == "simple"
    members = {(m.side, m.sentence.text) for m in PairSentence.objects.filter(pair=pairs[1])}
    assert members == {("complex", "C2."), ("simple", "S1.")}
    assert list(Adjudication.objects.values_list("value", "provenance")) == [("aligned", "imported")] * 2


def test_gold_is_stored_as_the_projects_own_scheme_values(project):
    project.label_scheme = LabelScheme.objects.get(slug="wivico-validity")
    project.save()
    record = {"id": "w", "complex": {"paragraphs": [["C0.", "C1."]]}, "simple": {"paragraphs": [["S0.", "S1."]]},
              "gold": [[0, 0], [1, 1]], "gold_labels": ["aligned", "partial"]}
    import_files(project, [("in.jsonl", jsonl(record))])
    gold = dict(Adjudication.objects.values_list("pair__complex_key", "value"))
    assert gold == {"0": "valid", "1": "partially-valid"}


def test_gold_in_a_likert_project_is_imported_without_labels_and_with_a_warning(project):
    project.label_scheme = LabelScheme.objects.get(slug="likert-human-eval")
    project.save()
    record = {"id": "l", "complex": {"paragraphs": [["C0."]]}, "simple": {"paragraphs": [["S0."]]}, "gold": [[0, 0]]}
    result = import_files(project, [("in.jsonl", jsonl(record))])
    assert result.pairs == 1 and Adjudication.objects.count() == 0
    assert any("counts as aligned" in w for w in result.warnings)


def test_identical_links_are_checked_but_not_imported(project):
    record = {"id": "i", "complex": {"paragraphs": [["Same."]]}, "simple": {"paragraphs": [["Same."]]}, "identical": [[0, 0]]}
    result = import_files(project, [("in.jsonl", jsonl(record))])
    assert result.pairs == 0 and CandidatePair.objects.count() == 0


def test_blank_lines_are_skipped_and_several_files_are_one_import(project):
    a = jsonl({"id": "a", "complex": {"paragraphs": [["A."]]}, "simple": {"paragraphs": [["a."]]}}) + b"\n   \n"
    b = jsonl({"id": "b", "complex": {"paragraphs": [["B."]]}, "simple": {"paragraphs": [["b."]]}})
    result = import_files(project, [("x/a.jsonl", a), ("x/b.ndjson", b)])
    assert result.articles == 2
    assert Sentence.objects.count() == 4
    assert Article.objects.get(title="b").meta["file"] == "x/b.ndjson"


def test_existing_titles_are_skipped_with_a_warning_when_asked(project):
    Article.objects.create(project=project, title="a")
    data = jsonl({"id": "a", "complex": {"paragraphs": [["A."]]}, "simple": {"paragraphs": [["a."]]}},
                 {"id": "b", "complex": {"paragraphs": [["B."]]}, "simple": {"paragraphs": [["b."]]}})
    result = import_files(project, [("in.jsonl", data)], on_conflict="skip")
    assert result.articles == 1
    assert "skipped 1 article(s)" in result.warnings[0] and "a" in result.warnings[0]
    assert sorted(Article.objects.values_list("title", flat=True)) == ["a", "b"]


def test_the_result_lists_the_new_article_ids(project):
    data = jsonl({"id": "a", "complex": {"paragraphs": [["A."]]}, "simple": {"paragraphs": [["a."]]}})
    result = import_files(project, [("in.jsonl", data)])
    assert result.article_ids == [Article.objects.get(title="a").pk]
    assert result.describe() == "1 articles, 2 documents, 2 sentences, 0 pairs (jsonl)"


def test_unicode_line_separators_inside_strings_do_not_break_records(project):
    record = {"id": "u", "complex": {"paragraphs": [["Zürich\u2028liegt am See."]]}, "simple": {"paragraphs": [["Ça va\u0085bien."]]}}
    data = (json.dumps(record, ensure_ascii=False) + "\n").encode()
    import_files(project, [("in.jsonl", data)])
    assert sentences("u", "complex") == ["Zürich\u2028liegt am See."]
    assert sentences("u", "simple") == ["Ça va\u0085bien."]
