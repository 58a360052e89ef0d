"""The engine JSONL format (SPEC §4)."""
from __future__ import annotations

import json

import pytest

from annotation.models import Adjudication, Article, CandidatePair, Document, LabelScheme, PairSentence, Sentence
from annotation.services.corpus.importing import import_files

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


def test_gold_links_without_labels_become_imported_pairs_of_unknown_kind(project):
    record = {"id": "g", "complex": {"paragraphs": [["C0.", "C1."], ["C2."]]},
              "simple": {"paragraphs": [["S0."], ["S1."]]}, "gold": [[0, 0], [2, 1], [2, 1]]}
    result = import_files(project, [("in.jsonl", jsonl(record))])
    assert result.pairs == 2
    pairs = list(CandidatePair.objects.order_by("complex_key"))
    assert ([(p.complex_key, p.simple_key, p.origin, p.predictions.count()) for p in pairs]
            == [("0", "0", "import", 0), ("2", "1", "import", 0)])
    assert pairs[1].complex_document.level == "complex" and pairs[1].simple_document.level == "simple"
    members = {(m.side, m.sentence.text) for m in PairSentence.objects.filter(pair=pairs[1])}
    assert members == {("complex", "C2."), ("simple", "S1.")}
    # no gold_labels: true links of unknown kind (Task 1 only), never silently "aligned" (issue 18)
    assert list(Adjudication.objects.values_list("value", "provenance")) == [("aligned-or-partial", "imported")] * 2


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


# --- n:m ``pairs`` (what the export's articles JSONL writes) ----------------------------------------

def doc(*paragraphs: list[str]) -> dict:
    return {"paragraphs": [list(p) for p in paragraphs]}


def with_pairs(pairs, rid="p", **extra) -> dict:
    return {"id": rid, "complex": doc(["C0.", "C1."], ["C2."]), "simple": doc(["S0.", "S1."], ["S2."]), "pairs": pairs, **extra}


def imported() -> dict[tuple[str, str], tuple]:
    """(complex key, simple key) → (origin, score, features, gold value, gold provenance, note)."""
    out = {}
    for p in CandidatePair.objects.select_related("gold"):
        g = getattr(p, "gold", None)
        out[(p.complex_key, p.simple_key)] = (p.origin, p.score, p.features,
                                              *((g.value, g.provenance, g.note) if g else (None, None, None)))
    return out


def test_pairs_become_n_to_m_imported_pairs_with_label_score_and_attributes(project):
    record = with_pairs([
        {"complex": [0], "simple": [0, 1], "label": "aligned", "class": "aligned", "provenance": "adjudicated",
         "votes": [{"annotator": "a1", "value": "aligned"}], "score": 0.9, "attributes": {"gain_prob": 0.8, "n": 1},
         "derived": False},
        {"complex": [2, 1], "simple": [2], "label": "partial", "provenance": "majority", "score": 0.4},
        {"complex": [1], "simple": [1], "label": "not-aligned"},
        {"complex": [2], "simple": [1], "score": None, "derived": True},
    ])
    result = import_files(project, [("in.jsonl", jsonl(record))])
    assert result.pairs == 4 and result.warnings == []
    assert imported() == {
        ("0", "0,1"): ("import", 0.9, {"gain_prob": 0.8, "n": 1}, "aligned", "imported", "source provenance: adjudicated"),
        ("1,2", "2"): ("import", 0.4, {}, "partial", "imported", "source provenance: majority"),
        ("1", "1"): ("import", None, {}, "not-aligned", "imported", ""),
        ("2", "1"): ("import", None, {"derived": 1.0}, None, None, None),  # no label: a pair without gold
    }
    merged = CandidatePair.objects.get(complex_key="1,2")
    members = sorted((m.side, m.sentence.text) for m in PairSentence.objects.filter(pair=merged))
    assert members == [("complex", "C1."), ("complex", "C2."), ("simple", "S2.")]


def test_pair_labels_may_be_scheme_values_or_classes(project):
    project.label_scheme = LabelScheme.objects.get(slug="sum4simp-quality")
    project.save()
    record = with_pairs([
        {"complex": [0], "simple": [0], "label": "good-partial"},
        {"complex": [1], "simple": [1], "label": "partial"},  # a value of this scheme as well as a class: the value
        {"complex": [2], "simple": [2], "label": "not"},  # a class: the scheme's first value counting as it
        {"complex": [0], "simple": [1], "label": "aligned"},
    ])
    import_files(project, [("in.jsonl", jsonl(record))])
    assert {k: v[3] for k, v in imported().items()} == {
        ("0", "0"): "good-partial", ("1", "1"): "partial", ("2", "2"): "bad", ("0", "1"): "good"}


def test_pairs_take_precedence_over_the_gold_links_they_cover(project):
    record = with_pairs(
        [{"complex": [0], "simple": [0, 1], "label": "not-aligned"}],
        gold=[[0, 0], [0, 1], [2, 2], [2, 2]], gold_labels=["aligned", "aligned", "partial", "partial"],
    )
    result = import_files(project, [("in.jsonl", jsonl(record))])
    assert result.pairs == 2
    assert {k: v[3] for k, v in imported().items()} == {("0", "0,1"): "not-aligned", ("2", "2"): "partial"}


def test_pairs_may_overlap_and_an_identical_repeat_is_one_pair(project):
    record = with_pairs([
        {"complex": [0], "simple": [0, 1], "label": "aligned", "score": 0.7},
        {"complex": [0], "simple": [0], "label": "partial"},  # overlaps the 1:2 pair: its own pair
        {"complex": [0], "simple": [1, 0], "label": "aligned", "score": 0.2},  # the same sentences again: dropped
    ])
    result = import_files(project, [("in.jsonl", jsonl(record))])
    assert result.pairs == 2
    assert {k: (v[1], v[3]) for k, v in imported().items()} == {("0", "0,1"): (0.7, "aligned"), ("0", "0"): (None, "partial")}


def test_an_empty_pairs_list_leaves_the_gold_links_as_they_are(project):
    import_files(project, [("in.jsonl", jsonl(with_pairs([], gold=[[1, 1]])))])
    assert {k: v[3] for k, v in imported().items()} == {("1", "1"): "aligned-or-partial"}  # no gold_labels


def test_pair_labels_in_a_likert_project_are_imported_without_gold_and_with_a_warning(project):
    project.label_scheme = LabelScheme.objects.get(slug="likert-human-eval")
    project.save()
    record = with_pairs([{"complex": [0], "simple": [0], "label": "aligned"}, {"complex": [1], "simple": [1], "label": "3"}])
    result = import_files(project, [("in.jsonl", jsonl(record))])
    assert result.pairs == 2 and Adjudication.objects.count() == 0
    assert result.warnings == ["the project's label scheme 'likert-human-eval' has no value that counts as aligned; "
                               "2 labelled link(s) were imported as pairs without a gold label"]


PAIR_ERRORS = [
    ("not a list", {"complex": [0]}, "pairs: must be a list of pair objects, got object"),
    ("item not an object", [[0, 0]], "pairs[0]: must be an object with 'complex', 'simple' and 'label', got list"),
    ("missing side", [{"complex": [0], "label": "aligned"}], "pairs[0].simple: is missing"),
    ("side not a list", [{"complex": 0, "simple": [0]}], "pairs[0].complex: must be a list of complex sentence indices, got int"),
    ("empty side", [{"complex": [0], "simple": []}], "pairs[0].simple: is empty; a pair needs at least one simple sentence"),
    ("index out of range", [{"complex": [0], "simple": [0]}, {"complex": [1, 3], "simple": [0]}],
     "pairs[1].complex[1]: complex index 3 out of range (the complex document has 3 sentences)"),
    ("index not an integer", [{"complex": [0], "simple": ["1"]}], "pairs[0].simple[0]: must be an integer sentence index, got string"),
    ("boolean index", [{"complex": [True], "simple": [0]}], "pairs[0].complex[0]: must be an integer sentence index, got boolean"),
    ("repeated index", [{"complex": [0, 0], "simple": [0]}], "pairs[0].complex[1]: repeats complex index 0"),
    ("unknown label", [{"complex": [0], "simple": [0], "label": "maybe"}],
     "pairs[0].label: unknown label 'maybe' for the project's label scheme 'aligned-partial-not'; "
     "choose one of: aligned, partial, not-aligned (or a class: aligned, partial, not)"),
    ("label not a string", [{"complex": [0], "simple": [0], "label": 1}],
     "pairs[0].label: must be a label string (a scheme value or a class), got int"),
    ("score not a number", [{"complex": [0], "simple": [0], "score": "0.5"}],
     "pairs[0].score: must be a finite number or null, got string"),
    ("score not finite", [{"complex": [0], "simple": [0], "score": float("nan")}],
     "pairs[0].score: must be a finite number or null, got NaN"),
    ("attributes not an object", [{"complex": [0], "simple": [0], "attributes": [1]}],
     "pairs[0].attributes: must be an object of numbers, got list"),
    ("attribute not a number", [{"complex": [0], "simple": [0], "attributes": {"gain": "high"}}],
     "pairs[0].attributes.gain: must be a finite number, got string"),
    ("derived not a boolean", [{"complex": [0], "simple": [0], "derived": 1}], "pairs[0].derived: must be true or false, got int"),
    ("provenance not a string", [{"complex": [0], "simple": [0], "provenance": 3}], "pairs[0].provenance: must be a string, got int"),
    ("identical sets, other labels", [{"complex": [0, 1], "simple": [0], "label": "aligned"},
                                      {"complex": [1, 0], "simple": [0], "label": "not-aligned"}],
     "pairs[1]: lists the same complex and simple sentences as pairs[0] with another label ('not-aligned', not 'aligned')"),
]


@pytest.mark.parametrize("pairs, message", [case[1:] for case in PAIR_ERRORS], ids=[case[0] for case in PAIR_ERRORS])
def test_bad_pairs_are_refused_with_file_line_and_field(project, counts, pairs, message):
    from annotation.services.corpus.importing import CorpusImportError

    good = {"id": "ok", "complex": doc(["A."]), "simple": doc(["a."]), "pairs": [{"complex": [0], "simple": [0], "label": "aligned"}]}
    before = counts()
    with pytest.raises(CorpusImportError) as caught:
        import_files(project, [("in.jsonl", jsonl(good, with_pairs(pairs)))])
    assert [str(p) for p in caught.value.problems] == [f"in.jsonl:2: {message}"]
    assert counts() == before  # all or nothing: the good first record was not written either


def test_every_bad_pair_of_a_record_is_reported(project):
    from annotation.services.corpus.importing import CorpusImportError

    record = with_pairs([{"complex": [9], "simple": []}, {"complex": [0], "simple": [0], "label": "nope"}])
    with pytest.raises(CorpusImportError) as caught:
        import_files(project, [("in.jsonl", jsonl(record))])
    assert [p.field for p in caught.value.problems] == ["pairs[0].complex[0]", "pairs[0].simple", "pairs[1].label"]
