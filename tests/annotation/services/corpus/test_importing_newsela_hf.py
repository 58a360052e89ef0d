"""The ``newsela`` (corpus as distributed) and ``hf`` (Hugging Face dataset) import formats (issue 22)."""
from __future__ import annotations

import io
import zipfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.management import call_command

from annotation.models import Adjudication, Article, CandidatePair, Document
from annotation.services import export
from annotation.services.corpus.importing import CorpusImportError, detect_format, import_files, import_path

pytestmark = pytest.mark.django_db

META = ("slug,language,title,grade_level,version,filename\n"
        "bees,en,Bees are busy,12.0,0,bees.en.0.txt\n"
        "bees,en,Busy bees,5.0,2,bees.en.2.txt\n"
        "bees,en,Bees work,8.0,1,bees.en.1.txt\n"
        "bees,es,Las abejas,12.0,0,bees.es.0.txt\n"
        "bees,es,Abejas,5.0,1,bees.es.1.txt\n")
TEXTS = {
    "bees.en.0.txt": "Bees are remarkably industrious insects. They visit many flowers.\n\nHoney is their product.\n",
    "bees.en.1.txt": "Bees work hard. They visit flowers.\n\nThey make honey.\n",
    "bees.en.2.txt": "Bees work.\n\nThey make honey.\n",
    "bees.es.0.txt": "Las abejas trabajan mucho.\n",
    "bees.es.1.txt": "Las abejas trabajan.\n",
}


def newsela_files(meta: str = META) -> list[tuple[str, bytes]]:
    return [("newsela/articles_metadata.csv", meta.encode())] + [
        (f"newsela/articles/{name}", text.encode()) for name, text in TEXTS.items()]


@pytest.fixture(autouse=True)
def import_dir(settings, tmp_path):
    settings.IMPORT_DIR = tmp_path / "imports"
    settings.MEDIA_ROOT = str(tmp_path / "media")


def test_newsela_one_article_per_slug_a_document_per_version_in_the_chosen_language(project):
    result = import_files(project, newsela_files(), "auto")
    assert result.format == "newsela" and (result.articles, result.documents) == (1, 3)
    article = Article.objects.get(project=project)
    assert article.title == "bees" and article.meta["title"] == "Bees are busy"
    docs = list(Document.objects.filter(article=article).order_by("rank"))
    assert [(d.level, d.rank, d.meta["grade_level"]) for d in docs] == [("0", 0, 12.0), ("1", 1, 8.0), ("2", 2, 5.0)]
    assert [[s.text for s in d.sentences.order_by("index")] for d in docs][0] == [
        "Bees are remarkably industrious insects.", "They visit many flowers.", "Honey is their product."]
    assert docs[0].paragraphs.count() == 2
    assert any("languages other than 'en'" in w for w in result.warnings)


def test_newsela_language_filter_and_an_archive(project):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for name, data in newsela_files():
            z.writestr(name, data)
    result = import_files(project, [("newsela.zip", buffer.getvalue())], "newsela", language="es")
    assert result.documents == 2
    assert list(Document.objects.filter(article__project=project).values_list("meta__language", flat=True)) == ["es", "es"]


@pytest.mark.parametrize("meta, problem", [
    (META.replace("bees,en,Bees work,8.0,1,", "bees,en,Bees work,8.0,x,"),
     "newsela/articles_metadata.csv:4: version: must be a version number"),
    (META.replace("bees.en.1.txt", "wasps.en.1.txt"), "newsela/articles_metadata.csv:4: filename: no file articles/wasps.en.1.txt"),
    (META.replace("grade_level,", ""), "newsela/articles_metadata.csv:1: grade_level: missing column"),
    (META.replace(",1,bees.en.1.txt", ",2,bees.en.1.txt"), "newsela/articles_metadata.csv:4: version: duplicate version 2"),
])
def test_newsela_bad_metadata_is_refused_with_its_line(project, meta, problem):
    with pytest.raises(CorpusImportError) as err:
        import_files(project, newsela_files(meta), "auto")
    assert str(err.value).startswith(problem), str(err.value)
    assert not Article.objects.filter(project=project).exists()


def test_the_command_recognises_newsela_and_a_pair_parquet(project, tmp_path, capsys):
    folder = tmp_path / "newsela"
    for name, data in newsela_files():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    call_command("import_corpus", project.name, str(folder))
    assert "(newsela)" in capsys.readouterr().out
    pq.write_table(pa.table({"src": ["A long sentence here.", "Another long one."], "dst": ["Short.", "Brief."]}),
                   tmp_path / "wikilarge.parquet")
    call_command("import_corpus", project.name, str(tmp_path / "wikilarge.parquet"))
    assert "(hf)" in capsys.readouterr().out
    assert CandidatePair.objects.filter(article__title="wikilarge").count() == 2


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
