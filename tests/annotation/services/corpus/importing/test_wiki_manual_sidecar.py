"""The sidecar of the ``tsv`` export (``corpus/importing/wiki_manual_sidecar.py``), read by the ``wiki-manual``
import beside the TSV files: its complete document pairs become exhaustive gold when the files carry them whole,
its rows keep the values the TSV cannot say, and a malformed sidecar is refused naming the file and the field."""
from __future__ import annotations

import json

import pytest

from annotation.models import Article
from annotation.services.corpus.importing import CorpusImportError, detect_format, import_files
from annotation.services.corpus.importing.wiki_manual_sidecar import SIDECAR, is_export_folder
from annotation.services.review.exhaustive import exhaustive_pairs
from tests.annotation.services.conftest import corpus_counts
from tests.annotation.services.corpus.importing.formats.test_wiki_manual import gold_of, tsv

pytestmark = pytest.mark.django_db

# article 7: a 2 x 2 document pair; three cells are TSV rows, the fourth a tie the TSV cannot say
ROWS = [
    ("aligned", "7-0-0-0", "7-1-0-0", "Bees fly.", "Bees fly far and wide."),
    ("notAligned", "7-0-0-0", "7-1-0-1", "Bees fly.", "They like flowers a lot."),
    ("notAligned", "7-0-0-1", "7-1-0-0", "Honey is sweet.", "Bees fly far and wide."),
]
TIE = {"split": "train", "label": "undecided", "simple_id": "7-0-0-1", "complex_id": "7-1-0-1",
       "simple": "Honey is sweet.", "complex": "They like flowers a lot.", "gleu": "0.5"}
COMPLETE = {"article": "7", "complex_level": "1", "simple_level": "0", "complex_sentences": 2, "simple_sentences": 2}


def sidecar(complete=(COMPLETE,), rows=(TIE,)) -> bytes:
    return json.dumps({"about": "test", "label_policy": "majority-or-single", "complete": list(complete),
                       "rows": list(rows)}, indent=1).encode()


def folder(data: bytes = b"") -> list[tuple[str, bytes]]:
    return [("wiki-manual/train.tsv", tsv(ROWS)), (f"wiki-manual/{SIDECAR}", data or sidecar())]


def test_the_folder_is_recognised_as_an_export_and_not_as_jsonl():
    names = ["wiki-manual/train.tsv", f"wiki-manual/{SIDECAR}"]
    assert is_export_folder(names) and detect_format(names) == "wiki-manual"
    assert not is_export_folder(["wiki-manual/train.tsv"]) and not is_export_folder([SIDECAR, "other.json"])


def test_a_listed_complete_pair_is_exhaustive_gold_and_its_tie_keeps_its_value(project):
    result = import_files(project, folder())
    assert result.articles == 1
    assert ("7", "1", "0", "1", "1", "undecided") in gold_of(project)  # never notAligned
    assert ("7", "1", "0", "0", "0", "aligned") in gold_of(project)
    assert [Article.objects.get(pk=p.article_id).title for p in exhaustive_pairs(project)] == ["7"]


def test_without_the_sidecar_the_same_rows_are_sparse_gold(project):
    import_files(project, folder()[:1], "wiki-manual")
    assert not exhaustive_pairs(project)
    assert ("7", "1", "0", "1", "1", "undecided") not in gold_of(project)


@pytest.mark.parametrize("data,problem", [
    (b"{not json", f"wiki-manual/{SIDECAR}: is not JSON"),
    (json.dumps({"complete": []}).encode(), "must be an object with the lists \"complete\" and \"rows\""),
    (sidecar(complete=[{**COMPLETE, "complex_sentences": 0}]), f"wiki-manual/{SIDECAR}: complete[0]: must be an object"),
    (sidecar(rows=[TIE, {**TIE, "label": 3}]), f"wiki-manual/{SIDECAR}: rows[1]: must be an object with the texts"),
])
def test_a_malformed_sidecar_is_refused_naming_the_field_and_nothing_is_imported(project, data, problem):
    with pytest.raises(CorpusImportError) as info:
        import_files(project, folder(data))
    assert any(problem in line for line in str(info.value).splitlines()), str(info.value)
    assert corpus_counts()["articles"] == 0


def test_two_sidecars_are_refused(project):
    files = folder() + [(f"other/{SIDECAR}", sidecar()), ("other/dev.tsv", tsv(ROWS[:1]))]
    with pytest.raises(CorpusImportError, match=f"a second {SIDECAR}"):
        import_files(project, files, "wiki-manual")
    assert corpus_counts()["articles"] == 0


def test_imported_as_predictions_the_sidecar_is_left_out_with_a_warning(project):
    result = import_files(project, folder(), "wiki-manual", gold_meaning="predictions")
    assert any(f"{SIDECAR} left out" in w for w in result.warnings)
    assert not exhaustive_pairs(project)
