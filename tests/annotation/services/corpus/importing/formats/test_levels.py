"""Plain-text articles at several levels: ``<Title>-<level>.<ext>``."""
from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import Article, CandidatePair, Document
from annotation.services.corpus.importing import import_files, read_path

pytestmark = pytest.mark.django_db

DEMO = Path(__file__).resolve().parents[6] / "annotation" / "fixtures" / "demo_corpus"


def levels_of(title: str) -> list[tuple[str, int]]:
    return list(Document.objects.filter(article__title=title).order_by("rank").values_list("level", "rank"))


def texts(title: str, level: str) -> list[str]:
    doc = Document.objects.get(article__title=title, level=level)
    return list(doc.sentences.order_by("index").values_list("text", flat=True))


def test_named_levels_are_ranked_from_most_complex_to_simplest(project):
    files = [("Amsterdam-ele.txt", b"Simple one."), ("Amsterdam-adv.txt", b"Complex one. Complex two."),
             ("Amsterdam-int.txt", b"Middle one.")]
    result = import_files(project, files)
    assert (result.format, result.articles, result.documents, result.sentences) == ("levels", 1, 3, 4)
    assert levels_of("Amsterdam") == [("adv", 0), ("int", 1), ("ele", 2)]


def test_numeric_levels_are_ranked_by_number_not_by_text(project):
    files = [(f"Water-{n}.txt", f"Level {n} text.".encode()) for n in (10, 2, 0)]
    import_files(project, files)
    assert levels_of("Water") == [("0", 0), ("2", 1), ("10", 2)]


def test_other_known_scales_and_case_are_understood(project):
    files = [("Doc-Summary.md", b"Short."), ("Doc-DOCUMENT.md", b"Long text here."),
             ("Wiki-simplified.text", b"Easy."), ("Wiki-original.text", b"Hard words.")]
    import_files(project, files)
    assert levels_of("Doc") == [("document", 0), ("summary", 1)]
    assert levels_of("Wiki") == [("original", 0), ("simplified", 1)]


def test_titles_may_contain_hyphens_and_newsela_file_names_work(project):
    files = [("New-York-adv.txt", b"A."), ("New-York-ele.txt", b"B."),
             ("water-shortage.en.0.txt", b"C."), ("water-shortage.en.1.txt", b"D.")]
    import_files(project, files)
    assert sorted(Article.objects.values_list("title", flat=True)) == ["New-York", "water-shortage"]
    assert levels_of("water-shortage") == [("0", 0), ("1", 1)]


def test_paragraphs_are_blank_line_separated_and_sentences_split(project):
    complex_text = b"First sentence. Second sentence.\nStill the first paragraph.\n\nThird paragraph here.\n"
    import_files(project, [("P-adv.txt", complex_text), ("P-ele.txt", b"Line one.\nLine two.\n")])
    adv = Document.objects.get(article__title="P", level="adv")
    assert [p.sentences.count() for p in adv.paragraphs.order_by("index")] == [3, 1]
    assert texts("P", "adv") == ["First sentence.", "Second sentence.", "Still the first paragraph.", "Third paragraph here."]
    # no blank line at all: one paragraph per line
    assert Document.objects.get(article__title="P", level="ele").paragraphs.count() == 2


@pytest.mark.parametrize(
    ("language", "text", "expected"),
    [
        ("en", "It rained. Then it stopped.", ["It rained.", "Then it stopped."]),
        ("fr", "Il pleuvait. Puis M. Dupont est sorti.", ["Il pleuvait.", "Puis M. Dupont est sorti."]),
        ("es", "La Sra. García llegó ayer. Después habló.", ["La Sra. García llegó ayer.", "Después habló."]),
        ("de", "Die Mauer fiel am 9. November 1989. Danach war alles anders.",
         ["Die Mauer fiel am 9. November 1989.", "Danach war alles anders."]),
    ],
)
def test_sentences_are_split_with_the_project_language(project, language, text, expected):
    project.language = language
    project.save()
    import_files(project, [("L-0.txt", text.encode()), ("L-1.txt", b"Short.")])
    assert texts("L", "0") == expected


def test_the_same_german_text_splits_differently_as_english(project):
    text = b"Die Mauer fiel am 9. November 1989. Danach war alles anders."
    import_files(project, [("L-0.txt", text), ("L-1.txt", b"Kurz.")], language="en")
    assert len(texts("L", "0")) == 3


def test_files_in_subfolders_group_by_title_and_record_their_file(project):
    files = [("a/Cat-adv.txt", b"A."), ("b/Cat-ele.txt", b"B.")]
    import_files(project, files)
    assert Document.objects.get(article__title="Cat", level="ele").meta["file"] == "b/Cat-ele.txt"
    assert CandidatePair.objects.count() == 0


def test_the_demo_corpus_imports_cleanly(project):
    result = import_files(project, read_path(DEMO), "levels")
    assert (result.articles, result.documents, result.pairs, result.warnings) == (4, 12, 0, [])
    assert sorted(Article.objects.values_list("title", flat=True)) == ["Bees", "Cycling", "Library", "Volcano"]
    for article in Article.objects.all():
        ranks = list(article.documents.order_by("rank").values_list("level", flat=True))
        assert ranks == ["adv", "int", "ele"]
        adv = article.documents.get(level="adv")
        assert 8 <= adv.sentences.count() <= 15 and 3 <= adv.paragraphs.count() <= 5
    assert result.sentences > 120
