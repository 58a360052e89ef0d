"""``export/gold_rows.py``: the gold's records read in place — no export, no split written unless ``lock``."""
from __future__ import annotations

import pytest

from annotation.models import Export, Split
from annotation.services.export import gold_rows
from annotation.services.export.options import ExportError
from tests.annotation.views.test_api_export import corpus  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db


def test_the_query_strings_options_must_be_a_json_object():
    assert gold_rows.parse_options(None) == {} and gold_rows.parse_options('{"dedup": false}') == {"dedup": False}
    for bad in ("[1, 2]", "{not json"):
        with pytest.raises(ExportError, match="options must be a JSON object"):
            gold_rows.parse_options(bad)


def test_the_options_are_a_gold_jsonl_readings_whatever_is_asked_and_bad_ones_are_refused():
    options = gold_rows.gold_options({"kind": "auto", "formats": ["tsv"], "lock": True})
    assert (options.kind, options.formats, options.lock) == ("gold", ["jsonl"], False)
    with pytest.raises(ExportError, match="colour"):
        gold_rows.gold_options({"colour": "red"})


def test_reading_writes_nothing_and_lock_assigns_and_locks_the_read_splits(corpus):  # noqa: F811
    options = gold_rows.gold_options({})
    read = list(gold_rows.gold_rows(corpus, options))
    assert read and all(r["split"] in {"train", "dev", "test"} for r in read)
    assert not Export.objects.exists() and not Split.objects.exists()
    locked = list(gold_rows.gold_rows(corpus, options, lock=True))
    assert sorted(r["id"] for r in locked) == sorted(r["id"] for r in read)
    assert Split.objects.exists() and not Export.objects.exists()
