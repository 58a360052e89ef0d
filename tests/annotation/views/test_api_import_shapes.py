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
