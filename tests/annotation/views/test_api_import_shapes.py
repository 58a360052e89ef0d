"""Uploads whose rows have the wrong shape answer 400 with ``file:line: field: message`` and store
nothing — never a 500 (issue 30: 1, 2)."""
from __future__ import annotations

import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Article

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytestmark = pytest.mark.django_db
HEADER = "slug,language,title,grade_level,version,filename\n"


@pytest.fixture(autouse=True)
def import_dir(settings, tmp_path):
    settings.IMPORT_DIR = tmp_path / "imports"
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)


def post(api, users, project, name: str, data: bytes):
    upload = SimpleUploadedFile(name, data, content_type="application/octet-stream")
    return api(users["rita"]).post(f"/api/projects/{project.pk}/import/", {"files": [upload]}, format="multipart")


def newsela_zip(title: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("articles_metadata.csv", f"{HEADER}bees,en,Bees,12.0,0,bees.en.0.txt\n"
                                             f"bees,en,{title},4.0,1,bees.en.1.txt\n")
        zf.writestr("articles/bees.en.0.txt", "Bees fly far and wide.\n")
        zf.writestr("articles/bees.en.1.txt", "Bees fly.\n")
    return buf.getvalue()


@pytest.mark.parametrize(("length", "expected"), [
    (200_000, "articles_metadata.csv:3: not readable as CSV (field larger than field limit (131072))"),
    (501, "articles_metadata.csv:3: title: is longer than 500 characters (501)"),
])
def test_a_newsela_title_over_the_limits_is_refused_with_its_line(api, users, project, length, expected):
    response = post(api, users, project, "newsela.zip", newsela_zip("T" * length))
    assert response.status_code == 400, response.content[:300]
    assert response.json()["problems"] == [expected]
    assert not Article.objects.filter(project=project).exists()


def test_an_hf_export_whose_ids_are_an_int_is_refused_with_its_row(api, users, project):
    rows = [{"article": "Bees", "complex_level": "adv", "simple_level": "ele", "complex_ids": ids, "simple_ids": [0],
             "complex": "Bees fly far and wide.", "simple": "Bees fly.", "label": "aligned"} for ids in (1, 2)]
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buf)
    response = post(api, users, project, "export.parquet", buf.getvalue())
    assert response.status_code == 400, response.content[:300]
    assert response.json()["problems"] == [
        f"export.parquet:{n}: complex_ids: must be a non-empty list of sentence indices, got int" for n in (1, 2)]
    assert not Article.objects.filter(project=project).exists()


@pytest.mark.parametrize(("name", "data", "overrides", "expected"), [
    ("newsela.zip", None, {"IMPORT_MAX_SENTENCES": 5},
     "articles_metadata.csv:4: filename: the import holds more than 5 sentences by article 'b1'; "
     "the limit is IMPORT_MAX_SENTENCES=5"),
    ("many.tsv", "".join(f"aligned\t{k}-0-0-0\t{k}-1-0-0\tBees fly.\tBees fly far.\n" for k in range(9)).encode(),
     {"IMPORT_MAX_ARTICLES": 2},
     "many.tsv:3: simple-id: the import holds more than 2 articles by article '2'; the limit is IMPORT_MAX_ARTICLES=2"),
])
def test_an_upload_producing_more_than_the_limits_answers_413_at_the_line_that_passed(api, users, project, settings,
                                                                                       name, data, overrides, expected):
    for key, value in overrides.items():
        setattr(settings, key, value)
    if data is None:  # 20 metadata rows naming one text of two sentences (issue 30 item 5, scaled down)
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("articles_metadata.csv", HEADER + "".join(f"b{k},en,Bees,{12 - v}.0,{v},bees.en.0.txt\n"
                                                                  for k in range(10) for v in (0, 1)))
            zf.writestr("articles/bees.en.0.txt", "Bees fly far. Bees fly wide.\n")
        data = buf.getvalue()
    response = post(api, users, project, name, data)
    assert response.status_code == 413, response.content[:300]
    assert response.json()["problems"] == [expected]
    assert not Article.objects.filter(project=project).exists()


# --- issue 36 items 8-10: imports decide their size before they grow in memory -------------------------

def articles_row(sentences: int) -> dict:
    """One hf/articles row whose complex document has ``sentences`` sentences."""
    def side(p: str, level: str, n: int) -> dict:
        return {f"{p}_level": level, f"{p}_article_content": {
            f"{p}_sentence_id": [f"{level}-0-{k}" for k in range(n)], f"{p}_sentence": [f"S{k}." for k in range(n)]}}
    return {"article": "Bees", "complex": side("complex", "adv", sentences), "simple": side("simple", "ele", 2),
            "sentence_alignment": {"complex_sentence_id": [["adv-0-0"]], "simple_sentence_id": [["ele-0-0"]],
                                   "label": ["aligned"]}}


def parquet_bytes(rows: list[dict]) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buf, compression="zstd")
    return buf.getvalue()


def one_text_zip(rows: int, text: str) -> bytes:
    """A Newsela zip whose metadata names one text ``rows`` times (two versions of rows/2 slugs)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("articles_metadata.csv", HEADER + "".join(f"b{k},en,Bees,{12 - v}.0,{v},bees.en.0.txt\n"
                                                              for k in range(rows // 2) for v in (0, 1)))
        zf.writestr("articles/bees.en.0.txt", text)
    return buf.getvalue()


SIZE_CASES = [
    # item 8: one row of many sentences a side: refused by the file's metadata (its values) ...
    ("values by the metadata", "articles.parquet", lambda: parquet_bytes([articles_row(40)]), {"IMPORT_MAX_SENTENCES": 30},
     "articles.parquet: complex: column complex.complex_article_content.complex_sentence_id.list.element holds 40 "
     "values in the import (40 in this"),
    # ... or, under the import's limit, by the row's list before its Python rows are built
    ("a list longer than a document", "articles.parquet", lambda: parquet_bytes([articles_row(40)]),
     {"IMPORT_MAX_SENTENCES_PER_DOCUMENT": 30},
     "articles.parquet:1: complex.complex_article_content.complex_sentence_id: a list of 40 items; the limit is "
     "IMPORT_MAX_SENTENCES_PER_DOCUMENT=30"),
    # item 9: the older hf export layout, more rows than a file may have lines
    ("rows by the metadata", "export.parquet", lambda: parquet_bytes([
        {"article": "Bees", "complex_level": "adv", "simple_level": "ele", "complex_ids": [k], "simple_ids": [k],
         "complex": f"C{k}.", "simple": f"S{k}.", "label": "aligned"} for k in range(12)]), {"IMPORT_MAX_LINES": 10},
     "export.parquet: file export.parquet has 12 rows (by its metadata); the limit is IMPORT_MAX_LINES=10"),
    # item 10: the metadata multiplies one text past the import's bytes, refused before one is read
    ("a text named 40 times", "newsela.zip", lambda: one_text_zip(40, "Bees fly far and wide. " * 8),
     {"IMPORT_MAX_BYTES": 4000},
     "articles_metadata.csv:23: filename: the texts the metadata names hold 4,048 bytes by this row (a file counts "
     "each time it is named); the limit is IMPORT_MAX_BYTES=4000"),
]


@pytest.mark.parametrize("case, name, build, overrides, expected", SIZE_CASES, ids=[c[0] for c in SIZE_CASES])
def test_a_small_upload_that_holds_too_much_is_refused_before_it_is_built(api, users, project, settings, case, name,
                                                                           build, overrides, expected):
    for key, value in overrides.items():
        setattr(settings, key, value)
    response = post(api, users, project, name, build())
    assert response.status_code == 413, response.content[:300]
    problems = response.json()["problems"]
    assert len(problems) == 1 and problems[0].startswith(expected), problems
    assert not Article.objects.filter(project=project).exists()


def test_a_small_upload_that_expands_past_the_background_size_is_imported_by_a_job(api, users, project, settings):
    """A 28 KB zstd parquet of 20,000 values is not imported inside the web request (items 8, 9: 20-80 s
    of a web thread); its upload's size alone said "small"."""
    from annotation.models import Job
    from annotation.services.corpus.importing.uploads import VALUE_BYTES

    settings.IMPORT_BACKGROUND_BYTES = 1_000_000
    data = parquet_bytes([articles_row(5000)])
    assert len(data) < settings.IMPORT_BACKGROUND_BYTES < 20_000 * VALUE_BYTES
    response = post(api, users, project, "articles.parquet", data)
    assert response.status_code == 202, response.content[:300]
    assert Job.objects.get(pk=response.json()["job"]["id"]).kind == "import"
