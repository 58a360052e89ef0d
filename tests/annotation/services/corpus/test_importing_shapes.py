"""Every import layout checks its rows' shapes and types before anything is written (issue 30: 6, 9, 10):
a refusal names ``file:line: field`` and stores nothing."""
from __future__ import annotations

import io
import zipfile

import pytest

from annotation.models import Article, Document
from annotation.services.corpus.importing import CorpusImportError, import_files

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytestmark = pytest.mark.django_db
ROW = "aligned\t7-0-0-0\t7-1-0-0\tBees fly.\tBees fly far and wide.\t0.5"
EXPORT_ROW = {"article": "Bees", "complex_level": "adv", "simple_level": "ele", "complex_ids": [0], "simple_ids": [0],
              "complex": "Bees fly far and wide.", "simple": "Bees fly.", "label": "aligned"}


@pytest.fixture(autouse=True)
def import_dir(settings, tmp_path):
    settings.IMPORT_DIR = tmp_path / "imports"


def parquet(rows: list[dict], schema=None) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), buf)
    return buf.getvalue()


def refusal(project, files, fmt: str = "auto") -> list[str]:
    with pytest.raises(CorpusImportError) as caught:
        import_files(project, files, fmt)
    assert not Article.objects.filter(project=project).exists()
    return [str(p) for p in caught.value.problems]


def test_a_newsela_archive_with_one_file_name_in_two_folders_is_refused_naming_both(project):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("articles_metadata.csv", "slug,language,title,grade_level,version,filename\n"
                                             "bees,en,Bees,12.0,0,bees.en.0.txt\nbees,en,Bees,4.0,1,bees.en.1.txt\n")
        zf.writestr("articles/bees.en.0.txt", "Bees fly far and wide.\n")
        zf.writestr("articles/bees.en.1.txt", "Bees fly.\n")
        zf.writestr("other/bees.en.0.txt", "Another text entirely.\n")
    problems = refusal(project, [("newsela.zip", buf.getvalue())])
    assert problems == ["other/bees.en.0.txt: two files are named 'bees.en.0.txt' (articles/bees.en.0.txt and "
                        "other/bees.en.0.txt); articles_metadata.csv names files without their folder — rename or "
                        "remove one"]


@pytest.mark.parametrize(("change", "expected"), [
    ({"complex_level": None}, "export.parquet:1: complex_level: must be a non-empty text, got null"),
    ({"simple_level": "adv"}, "export.parquet:1: simple_level: is the complex level too ('adv'); the two levels "
                              "must differ"),
    # issue 36 item 3: a 500 on PostgreSQL (varchar(50)), stored as given on SQLite
    ({"complex_level": "a" * 51}, "export.parquet:1: complex_level: must be at most 50 characters, got 51"),
    ({"simple_level": "e" * 51}, "export.parquet:1: simple_level: must be at most 50 characters, got 51"),
])
def test_an_hf_export_row_with_a_null_or_repeated_level_is_refused_before_writing(project, change, expected):
    rows = [{**EXPORT_ROW, **change}, {**EXPORT_ROW, "complex_ids": [1], "simple_ids": [1]}]
    assert refusal(project, [("export.parquet", parquet(rows))]) == [expected]


@pytest.mark.parametrize("side", ["complex_level", "simple_level"])
def test_an_hf_export_line_with_a_level_over_50_characters_is_refused(project, side):
    """Issue 36 item 3, the hf export with per-sentence columns (read as pair lines)."""
    row = {**EXPORT_ROW, side: "z" * 51, "complex_sentences": ["Bees fly far and wide."],
           "simple_sentences": ["Bees fly."], "complex_paragraphs": [0], "simple_paragraphs": [0]}
    assert refusal(project, [("export.parquet", parquet([row]))]) == [
        f"export.parquet:1: {side}: must be at most 50 characters, got 51"]


def test_an_hf_export_line_with_a_null_level_is_refused(project):
    row = {**EXPORT_ROW, "complex_level": None, "complex_sentences": ["Bees fly far and wide."],
           "simple_sentences": ["Bees fly."], "complex_paragraphs": [0], "simple_paragraphs": [0]}
    assert refusal(project, [("export.parquet", parquet([row]))]) == [
        "export.parquet:1: complex_level: must be a level name (a non-empty string or an integer), got null"]


def test_a_wiki_manual_row_with_a_seventh_column_is_refused_with_its_line(project):
    data = f"{ROW}\n{ROW.replace('0-0-0', '0-0-1')}\textra\n".encode()
    assert refusal(project, [("rows.tsv", data)], "wiki-manual") == [
        "rows.tsv:2: 7 columns; a row has at most 6 (label, simple-id, complex-id, simple, complex[, GLEU])"]


def test_a_header_only_tsv_is_refused_like_an_empty_file_unless_another_file_has_rows(project):
    header = b"label\tsimple-id\tcomplex-id\tsimple\tcomplex\tGLEU\n"
    assert refusal(project, [("rows.tsv", header)], "wiki-manual") == [
        "rows.tsv: holds no rows (only a header or blank lines)"]
    result = import_files(project, [("a.tsv", header), ("b.tsv", f"{ROW}\n".encode())], "wiki-manual")
    assert result.articles == 1 and any("left out 1 file(s) without rows: a.tsv" in w for w in result.warnings)


def test_an_empty_parquet_is_refused_like_an_empty_file_unless_another_file_has_rows(project):
    schema = pa.Table.from_pylist([EXPORT_ROW]).schema
    empty = parquet([], schema)
    assert refusal(project, [("export.parquet", empty)]) == ["export.parquet: holds no rows (an empty dataset)"]
    result = import_files(project, [("a.parquet", empty), ("b.parquet", parquet([EXPORT_ROW]))])
    assert result.articles == 1 and Document.objects.filter(article__project=project).count() == 2


def test_an_hf_export_row_repeated_is_one_pair_and_with_another_label_is_refused(project):
    """The older hf export layout stored the same pair twice and answered the database's unique
    constraint (issue 36 items 4 and 9); a repeated sentence id with another text kept the first silently."""
    second = {**EXPORT_ROW, "complex_ids": [1], "simple_ids": [1], "complex": "They make honey.", "simple": "Honey."}
    result = import_files(project, [("export.parquet", parquet([EXPORT_ROW, EXPORT_ROW, second]))])
    assert (result.articles, result.pairs) == (1, 2)
    Article.objects.all().delete()
    assert refusal(project, [("export.parquet", parquet([EXPORT_ROW, {**EXPORT_ROW, "label": "partial"}]))]) == [
        "export.parquet:2: label: lists the same sentences of article 'Bees' as export.parquet:1 with another label; "
        "keep one"]
    assert refusal(project, [("export.parquet", parquet([EXPORT_ROW, {**second, "complex_ids": [0]}]))]) == [
        "export.parquet:2: complex: sentence 0 of level 'adv' of article 'Bees' differs from an earlier row's"]
