"""What goes wrong in an import (``importing.problems``): located problems, the server's folders never
shown, collected up to a cap, and one refusal (400, or 413 for a size limit) naming every one."""
from __future__ import annotations

import pytest

from annotation.services.corpus.importing.problems import CorpusImportError, Problem, Problems


def test_a_problem_says_where_as_precisely_as_it_knows():
    assert str(Problem("a.jsonl", 3, "complex.paragraphs[0][1]", "must be a string")) == (
        "a.jsonl:3: complex.paragraphs[0][1]: must be a string")
    assert str(Problem("", 7, None, "bad")) == "line 7: bad"
    assert str(Problem("a.tsv", None, None, "empty")) == "a.tsv: empty"


def test_the_import_folder_is_cut_out_of_files_and_messages(settings, tmp_path):
    settings.IMPORT_DIR = tmp_path
    problem = Problem(f"{tmp_path}/upload-0af3/corpus/a.jsonl", 1, None, f"cannot read {tmp_path}/x")
    assert problem.file == "corpus/a.jsonl" and str(tmp_path) not in problem.message


def test_problems_are_kept_up_to_the_cap_and_the_rest_counted():
    problems = Problems(cap=2)
    assert not problems
    problems.raise_if_any()  # nothing to refuse
    for line in range(1, 5):
        problems.add("a.jsonl", "bad", line=line)
    assert len(problems) == 2 and problems.full and problems.dropped == 2
    with pytest.raises(CorpusImportError) as refused:
        problems.raise_if_any()
    assert [str(p) for p in refused.value.problems][-1] == "... and 2 more problems not shown"
    assert refused.value.status == 400 and refused.value.payload()["detail"] == "nothing was imported"


def test_a_size_limit_is_413_and_names_its_setting():
    refused = CorpusImportError.one("big.jsonl", "too many lines", limit="IMPORT_MAX_LINES")
    assert refused.too_large and refused.status == 413
    assert refused.payload()["limits"] == ["IMPORT_MAX_LINES"]
