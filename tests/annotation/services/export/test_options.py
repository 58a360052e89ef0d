"""What an export contains (``export/options.py``): every option declared once, parsed once into a frozen
``ExportOptions`` (defaults, comma-separated text, the CRF paper's BLEU band), and every bad value refused at once
under its option's name."""
from __future__ import annotations

import dataclasses

import pytest

from annotation.services.export.options import (
    CRF_BLEU_BAND,
    DEFAULT_LABEL_POLICY,
    ExportError,
    ExportOptions,
    ExportOptionsError,
    export_options,
)


def refused(raw: dict, **kwargs) -> dict[str, str]:
    with pytest.raises(ExportOptionsError) as info:
        ExportOptions.parse(raw, **kwargs)
    assert isinstance(info.value, ExportError) and info.value.status == 400
    return info.value.problems


def test_no_options_are_the_declared_defaults_and_null_means_default():
    options = ExportOptions.parse(None)
    assert options == ExportOptions() == ExportOptions.parse({"label_policy": None, "runs": None})
    assert options.formats == ["tsv", "parallel", "jsonl", "articles", "hf"] and options.splits == ["train", "dev", "test"]
    assert options.label_policy == DEFAULT_LABEL_POLICY and options.drop_identical and options.bleu_band is None
    assert {o.name for o in export_options()} == {f.name for f in dataclasses.fields(ExportOptions)}
    assert all(o.help for o in export_options())
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.kind = "auto"


def test_text_lists_ids_and_the_bleu_band_are_read_as_meant():
    options = ExportOptions.parse({"formats": "jsonl, hf", "splits": "train", "labels": "aligned,partial",
                                   "provenance": "adjudicated", "bleu_band": True, "model_version": 7,
                                   "thresholds": [{"key": "gain_prob", "op": "gte", "value": 1}],
                                   "level_pairs": [[0, 1]], "kind": "auto"})
    assert options.formats == ["jsonl", "hf"] and options.splits == ["train"] and options.labels == ["aligned", "partial"]
    assert options.provenance == ["adjudicated"] and options.bleu_band == list(CRF_BLEU_BAND)
    assert options.model_version == 7 and options.level_pairs == [["0", "1"]]
    assert options.thresholds == [{"key": "gain_prob", "op": "gte", "value": 1.0}]  # a float
    assert ExportOptions.parse({"bleu_band": [0.2, 0.8]}).bleu_band == [0.2, 0.8]
    assert ExportOptions.parse({"bleu_band": False}).bleu_band is None
    assert ExportOptions.parse(ExportOptions.parse({"runs": [3], "kind": "auto"}).as_dict()).runs == [3]


def test_every_bad_value_is_refused_at_once_under_its_name():
    problems = refused({"formats": ["csv"], "splits": [], "bleu_band": [0.9, 0.1], "label_policy": "any",
                        "thresholds": [{"key": "bad key", "op": "gt", "value": 1}], "runs": [0], "colour": 1})
    assert set(problems) == {"formats", "splits", "bleu_band", "label_policy", "thresholds", "runs", "colour"}
    assert "unknown formats 'csv'; choose from: tsv, parallel, jsonl, articles, hf" in problems["formats"]
    assert "choose at least one split" in problems["splits"]
    assert "thresholds[0].key must be an attribute name" in problems["thresholds"]


@pytest.mark.parametrize("raw,option,message", [
    ({"thresholds": [{"key": "x", "op": "near", "value": 1}]}, "thresholds", "thresholds[0].op must be one of"),
    ({"thresholds": [{"key": "x", "op": "gt"}]}, "thresholds", "exactly key, op and value"),
    ({"labels": []}, "labels", "labels must be a non-empty list"),
    ({"level_pairs": [["0"]]}, "level_pairs", "must be a list of [complex_level, simple_level] pairs"),
    ({"dedup": [{"project": 1, "sentences": []}]}, "dedup", "dedup[0] must be one of"),
    ({"dedup": [{"project": 1, "colour": "red"}]}, "dedup", "dedup[0] has unknown key(s) colour"),
    ({"dedup": [{"sentences": [1]}]}, "dedup", "dedup[0].sentences must be a list of strings"),
    ({"dedup": [{"path": "/etc/passwd"}]}, "dedup", "files on the server can only be named on the command line"),
    ({"split_policy": {"mode": "magic"}}, "split_policy", ""),
])
def test_a_bad_option_is_refused_with_what_to_change(raw, option, message):
    problems = refused(raw)
    assert list(problems) == [option] and message in problems[option]


def test_an_evaluation_set_is_read_and_a_path_only_on_the_command_line():
    options = ExportOptions.parse({"dedup": [{"project": "Eval", "splits": "test"}, {"sentences": ["A."]}]})
    assert options.dedup == [{"project": "Eval", "splits": ["test"], "name": ""},
                             {"sentences": ["A."], "name": "inline set 1"}]
    command = ExportOptions.parse({"dedup": [{"path": "eval.txt"}]}, allow_paths=True)
    assert command.dedup == [{"path": "eval.txt", "name": "eval.txt"}]


def test_an_auto_export_needs_a_model_version_or_runs():
    assert refused({"kind": "auto"}) == {"kind": "an auto export needs a model_version or runs"}
    assert ExportOptions.parse({"kind": "auto", "runs": 4}).runs == [4]


def test_the_options_an_export_kept_are_read_back_as_they_are_not_parsed_again():
    """Issue 38: options are parsed once, at the edge; the worker reads back what the export kept (equal to the
    parsed options, every field), and only a kept row with a key this version does not know is parsed again."""
    parsed = ExportOptions.parse({"kind": "gold", "formats": ["jsonl", "tsv"], "labels": ["aligned"], "bleu_band": [0.1, 0.9]})
    assert ExportOptions.stored(parsed.as_dict()) == parsed
    older = {**parsed.as_dict(), "a_key_of_an_older_release": 1}
    with pytest.raises(ExportOptionsError, match="a_key_of_an_older_release"):
        ExportOptions.stored(older)
