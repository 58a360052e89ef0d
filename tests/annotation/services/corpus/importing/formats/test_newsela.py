"""The ``newsela`` import format (``corpus/importing/formats/newsela.py``): the corpus as distributed, one
article per slug, a document per version in the chosen language, and its metadata refused line by line."""
from __future__ import annotations

import io
import zipfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.management import call_command

from annotation.models import Article, CandidatePair, Document
from annotation.services.corpus.importing import CorpusImportError, import_files

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


@pytest.mark.parametrize("files, problem", [
    (newsela_files() + [("copy/articles_metadata.csv", META.encode())], "expected one articles_metadata.csv, found 2"),
    (newsela_files(META.replace(",Busy bees,", ",,")), "newsela/articles_metadata.csv:3: title: is empty"),
    (newsela_files() + [("elsewhere/bees.en.2.txt", b"Bees.\n")], "two files are named 'bees.en.2.txt'"),
])
def test_an_ambiguous_corpus_or_an_empty_title_is_refused_naming_the_file(project, files, problem):
    with pytest.raises(CorpusImportError) as err:
        import_files(project, files, "newsela")
    assert problem in str(err.value), str(err.value)
    assert not Article.objects.filter(project=project).exists()


def test_a_language_without_versions_is_refused(project):
    with pytest.raises(CorpusImportError, match="no versions in language 'fr'"):
        import_files(project, newsela_files(), "newsela", language="fr")
