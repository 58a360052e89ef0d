"""The ``hf`` import format (``corpus/importing/formats/hf.py``): a Hugging Face pair dataset with named columns
and labels, refused row by row, and the ``hf`` export's folder read back with its gold. (The dataset layouts:
``test_hf_layouts.py``.)"""
from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from annotation.models import Adjudication, Article, Document
from annotation.services import export
from annotation.services.corpus.importing import CorpusImportError, detect_format, import_files, import_path

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def import_dir(settings, tmp_path):
    settings.IMPORT_DIR = tmp_path / "imports"
    settings.MEDIA_ROOT = str(tmp_path / "media")


def test_hf_pair_dataset_with_named_columns_and_labels(project, tmp_path):
    table = pa.table({"complex": ["The cat sat on the mat today.", "Dogs bark at night loudly."],
                      "simple": ["The cat sat.", "Cats purr."], "y": ["aligned", "notAligned"]})
    pq.write_table(table, tmp_path / "pairs.parquet")
    assert detect_format(["pairs.parquet"]) == "hf"
    result = import_path(project, tmp_path / "pairs.parquet", "hf", columns="complex,simple,y")
    assert (result.articles, result.sentences, result.pairs) == (1, 4, 2)
    assert sorted(Adjudication.objects.values_list("value", flat=True)) == ["aligned", "not-aligned"]


def test_hf_bad_label_and_missing_column_are_refused(project, tmp_path):
    pq.write_table(pa.table({"src": ["A.", "B."], "dst": ["a.", "b."], "label": ["aligned", "maybe"]}), tmp_path / "p.parquet")
    with pytest.raises(CorpusImportError) as err:
        import_path(project, tmp_path / "p.parquet", "hf")
    assert str(err.value).startswith("p.parquet:2: label: label 'maybe'"), str(err.value)
    with pytest.raises(CorpusImportError) as err:
        import_path(project, tmp_path / "p.parquet", "hf", columns="src,target")
    assert "target: no column 'target'" in str(err.value)
    assert not Article.objects.filter(project=project).exists()


def test_hf_export_reads_back_its_pairs_and_gold(project, tmp_path):
    import_files(project, [("a.jsonl", b'{"id": "A", "complex": {"paragraphs": [["C0 is long.", "C1 is long."]]}, '
                                       b'"simple": {"paragraphs": [["S0.", "S1."]]}, "gold": [[0, 0], [1, 1]], '
                                       b'"gold_labels": ["aligned", "partial"]}\n')])
    options = export.ExportOptions.parse({"formats": ["hf"], "split_policy": {"mode": "counts", "train": 1, "dev": 0, "test": 0,
                                                                   "seed": 0}}, allow_paths=True)
    root = export.export_dir(export.run_export(project, options))
    other = type(project).objects.create(name="Back", label_scheme=project.label_scheme, language="en")
    result = import_path(other, root / "hf", "auto")
    assert result.format == "hf" and result.pairs == 2
    assert sorted(Adjudication.objects.filter(pair__article__project=other).values_list(
        "pair__complex_key", "pair__simple_key", "value")) == [("0", "0", "aligned"), ("1", "1", "partial")]
    assert [[s.text for s in d.sentences.order_by("index")] for d in Document.objects.filter(
        article__project=other).order_by("rank")] == [["C0 is long.", "C1 is long."], ["S0.", "S1."]]


def test_the_api_takes_the_columns_of_an_hf_pair_dataset(project, api, users, tmp_path):
    from django.core.files.uploadedfile import SimpleUploadedFile

    buffer = io.BytesIO()
    pq.write_table(pa.table({"a": ["A long sentence here."], "b": ["Short."], "gold": ["partial"]}), buffer)
    response = api(users["rita"]).post(f"/api/projects/{project.pk}/import/", {
        "files": [SimpleUploadedFile("set.parquet", buffer.getvalue())], "columns": "a,b,gold"}, format="multipart")
    assert response.status_code in (200, 201), response.content
    assert list(Adjudication.objects.filter(pair__article__project=project).values_list("value", flat=True)) == ["partial"]
