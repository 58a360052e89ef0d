"""``importing.request``: an import's options parsed once into an ``ImportRequest``."""
from __future__ import annotations

import pytest

from annotation.services.corpus.importing import CorpusImportError, ImportRequest, format_names
from annotation.services.corpus.importing.request import import_options


def test_a_form_is_parsed_once_into_the_request_with_defaults_for_blank_fields():
    request = ImportRequest.parse({"format": "jsonl", "language": "", "gold_meaning": "", "test_questions": "1",
                                   "columns": " src , dst "}, text=True)
    assert request == ImportRequest(format="jsonl", test_questions=True, columns=("src", "dst"))


def test_every_bad_option_is_a_problem_naming_its_field():
    with pytest.raises(CorpusImportError) as refused:
        ImportRequest.parse({"format": "csv", "language": "xx", "on_conflict": "merge", "gold_meaning": "complete"})
    assert [p.field for p in refused.value.problems] == ["format", "language", "on_conflict", "gold_meaning"]
    assert "unknown format 'csv'; choose one of: auto, jsonl" in str(refused.value.problems[0])
    assert "unsupported language 'xx'" in str(refused.value.problems[1])
    assert refused.value.status == 400


def test_a_job_gets_back_the_request_it_was_queued_with():
    request = ImportRequest(format="hf", language="fr", on_conflict="skip", gold_meaning="exhaustive",
                            test_questions=True, source="a.parquet", columns=("c", "s", "l"), token="t1")
    assert ImportRequest.from_params({**request.as_params(), "upload": "upload-x", "files": ["a.parquet"]}) == request


def test_the_command_the_page_and_the_api_read_the_same_declarations():
    names = [o.name for o in import_options()]
    assert names == ["format", "language", "on_conflict", "gold_meaning", "test_questions", "source", "columns"]
    assert all(o.help for o in import_options())


def test_the_declarations_are_built_once_and_the_format_choices_read_the_registry_when_asked():
    """Issue 38 (the upload walk): no declarations rebuilt per request; a format registered later is still a choice
    because the ``format`` choices read the registry (``tests/annotation/test_throwaway_extensions.py`` adds one)."""
    assert import_options() is import_options()
    choices = import_options()[0].choices
    assert tuple(choices) == ("auto", *format_names()) and choices == ("auto", *format_names())
    assert "jsonl" in choices and "auto" in choices and "csv" not in choices and len(choices) == 1 + len(format_names())
