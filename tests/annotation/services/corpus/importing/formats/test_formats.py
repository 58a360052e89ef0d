"""The import formats' registry (``importing/formats/``): every registered format is offered by the
import page, the command and the API, and imports its own tiny example; a format registered by a
test shows up everywhere at once and is gone once removed."""
from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from annotation.management.commands.import_corpus import Command as ImportCommand
from annotation.models import Article
from annotation.services.corpus.importing import (
    CorpusImportError,
    ImportRequest,
    detect_format,
    format_names,
    import_files,
)
from annotation.services.corpus.importing import formats as registry
from annotation.services.corpus.importing.base import ParsedArticle, ParsedDocument

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def import_dir(settings, tmp_path):
    settings.IMPORT_DIR = tmp_path
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)


def _page(client, users, project) -> str:
    client.force_login(users["rita"])
    response = client.get(f"/projects/{project.pk}/import/")
    assert response.status_code == 200
    return response.content.decode()


def _command_choices() -> list[str]:
    parser = ImportCommand().create_parser("manage.py", "import_corpus")
    return next(a.choices for a in parser._actions if a.dest == "format")


def test_the_built_in_formats_are_registered_in_list_order():
    assert format_names() == ("jsonl", "levels", "stories", "parallel", "wiki-manual", "newsela", "hf")


@pytest.mark.parametrize("fmt", [f.name for f in registry.formats()])
def test_every_format_is_offered_everywhere_and_imports_its_example(fmt, client, users, project):
    spec = registry.get(fmt)
    page = _page(client, users, project)
    assert f"<option>{fmt}</option>" in page and f"<b>{fmt}</b>" in page
    assert fmt in _command_choices()
    assert ImportRequest.parse({"format": fmt}).format == fmt
    if not spec.example:  # a binary format (hf: Arrow/parquet), imported by its own tests
        return
    files = [(name, text.encode()) for name, text in spec.example]
    assert detect_format([name for name, _ in files]) == fmt
    result = import_files(project, files, fmt)
    assert result.format == fmt and result.articles >= 1 and result.sentences >= 2
    assert Article.objects.filter(project=project).count() == result.articles


@pytest.fixture
def dummy_format():
    """A format of one article per ``.dummy`` file: its lines are the complex side, reversed the simple."""

    @registry.register("dummy", extensions=("dummy",), help="a test's own format", example=(("x.dummy", "One.\n"),))
    def parse(files, ctx):
        for f in files:
            lines = [line for _, line in ctx.lines(f) if line.strip()]
            yield ParsedArticle(title=f.stem, file=f.name, line=None, documents=[
                ParsedDocument(level="complex", rank=0, paragraphs=[lines]),
                ParsedDocument(level="simple", rank=1, paragraphs=[lines[::-1]]),
            ])

    yield "dummy"
    registry.unregister("dummy")


def test_a_registered_format_is_listed_accepted_by_the_api_and_gone_once_removed(dummy_format, client, users,
                                                                                 project, api):
    page = _page(client, users, project)
    assert "<option>dummy</option>" in page and "<b>dummy</b> (a test&#x27;s own format)" in page
    assert "dummy" in _command_choices()
    assert detect_format(["a.dummy"]) == "dummy"
    upload = SimpleUploadedFile("Tale.dummy", b"First line.\nSecond line.\n")
    response = api(users["rita"]).post(f"/api/projects/{project.pk}/import/", {"files": [upload], "format": "dummy"},
                                       format="multipart")
    assert response.status_code == 201, response.json()
    assert (response.json()["format"], response.json()["articles"], response.json()["sentences"]) == ("dummy", 1, 4)

    registry.unregister("dummy")
    assert "dummy" not in format_names()
    assert "<option>dummy</option>" not in _page(client, users, project)
    with pytest.raises(CorpusImportError, match="unknown format 'dummy'"):
        ImportRequest.parse({"format": "dummy"})


def test_a_format_cannot_take_another_formats_name_or_extension():
    with pytest.raises(ValueError, match="registered twice"):
        registry.register("jsonl", extensions=("jsonl",), help="", example=())(lambda files, ctx: iter(()))
    with pytest.raises(ValueError, match="already belong to jsonl"):
        registry.register("other", extensions=("ndjson",), help="", example=())(lambda files, ctx: iter(()))
    assert "other" not in format_names()


def test_the_command_imports_with_a_registered_format(dummy_format, project, tmp_path):
    path = tmp_path / "Story.dummy"
    path.write_text("Alpha.\nBeta.\n")
    call_command("import_corpus", project.name, str(path), "--format", "dummy")
    assert Article.objects.get(project=project, title="Story").documents.count() == 2
