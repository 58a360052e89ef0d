from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Export, Split
from tests import factories
from tests.annotation.commands.cases import STRICT_JSON

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(project, settings, tmp_path):
    from annotation.models import Adjudication, CandidatePair, indices_key

    settings.MEDIA_ROOT = str(tmp_path)
    for a in range(10):
        article = factories.make_article(project, f"a{a}", {"0": [["The complex sentence number one.", "Two."]],
                                                            "1": [["The simple one.", "Two."]]})
        docs = {d.level: d for d in article.documents.all()}
        for i in (0, 1):
            pair = CandidatePair.objects.create(article=article, complex_document=docs["0"], simple_document=docs["1"],
                                                complex_key=indices_key([i]), simple_key=indices_key([i]),
                                                features={"gain_prob": 0.2 + 0.6 * i})
            Adjudication.objects.create(pair=pair, value="aligned", provenance="adjudicated")
    return project


def test_export_writes_the_files_and_prints_a_one_line_summary(corpus):
    out = StringIO()
    call_command("export", corpus.name, "--counts", "7,1,2", "--seed", "4", "--format", "jsonl,parallel", "--no-zip",
                 stdout=out)
    done = Export.objects.get()
    *progress_lines, line = out.getvalue().strip().split("\n")  # progress lines (test_progress.py), then one summary
    assert line.startswith(f"export #{done.pk} (gold) of 'Newsela sample': 20 pairs")
    assert all(p.startswith("export: ") for p in progress_lines)
    assert done.manifest["split_policy"]["seed"] == 4 and done.archive == ""
    assert sorted(Split.objects.values_list("name", flat=True)).count("train") == 7
    assert done.pair_count == 20  # the identical "Two." pairs stay in the gold (issue 27 §3)...
    assert done.manifest["dropped_training"] == {"identical": 10}  # ...and leave the training outputs


def test_flags_become_filters(corpus):
    call_command("export", str(corpus.pk), "--threshold", "gain_prob>=0.5", "--keep-identical", "--bleu-band",
                 "--exclude-level-pairs", "1-2", "--format", "jsonl", stdout=StringIO())
    manifest = Export.objects.get().manifest
    assert manifest["filters"]["thresholds"] == [{"key": "gain_prob", "op": "gte", "value": 0.5}]
    assert manifest["filters"]["bleu_band"] == [0.1, 0.9] and manifest["filters"]["drop_identical"] is False
    assert manifest["filters"]["exclude_level_pairs"] == [["1", "2"]]


def test_preview_writes_nothing(corpus):
    out = StringIO()
    call_command("export", corpus.name, "--preview", stdout=out)
    assert out.getvalue().startswith("preview of a gold export of 'Newsela sample': 20 pairs")
    assert 'left out of the training outputs {"identical": 10}' in out.getvalue()
    assert "gold policy majority-or-single (chosen): 20 pairs" in out.getvalue()  # the default keeps the votes
    assert "gold policy stored:" in out.getvalue()
    assert not Export.objects.exists() and not Split.objects.exists()


def test_options_json_and_dedup_files(corpus, tmp_path):
    eval_file = tmp_path / "eval.txt"
    eval_file.write_text("The simple one.\n")
    call_command("export", corpus.name, "--options", json.dumps({"formats": ["tsv"], "label_policy": "majority"}),
                 "--dedup-file", str(eval_file), stdout=StringIO())
    manifest = Export.objects.get().manifest
    assert manifest["formats"] == ["tsv"] and manifest["label_policy"] == "majority"
    assert manifest["dropped"]["evaluation_set"] == 10


@pytest.mark.parametrize("args,message", [
    (["Nope"], "project 'Nope' not found"),
    (["Newsela sample", "--threshold", "gain_prob=>1"], "must look like KEY>=VALUE"),
    (["Newsela sample", "--ratio", "1,2"], "three numbers"),
    (["Newsela sample", "--kind", "auto"], "needs a model_version or runs"),
    (["Newsela sample", "--bleu-band", "0.2"], "no values or two"),
])
def test_bad_arguments_are_command_errors(corpus, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("export", *args, stdout=StringIO())


@pytest.mark.parametrize("options,message", STRICT_JSON)
def test_export_refuses_options_that_cannot_be_stored_and_writes_nothing(corpus, options, message):
    with pytest.raises(CommandError) as caught:
        call_command("export", corpus.name, "--options", options, stdout=StringIO())
    assert str(caught.value).startswith(message.format(opt="--options"))
    assert not Export.objects.exists()


@pytest.mark.parametrize("args,message", [
    (["--threshold", "gain_prob>=1e999"], "options.thresholds[0].value: number out of range (not finite)"),
    (["--bleu-band", "nan", "0.9"], "options.bleu_band[0]: number out of range (not finite)"),
    (["--ratio", "inf,0.1,0.2"], "options.split_policy.train: number out of range (not finite)"),
    (["--labels", "aligned,\udcff"], "options.labels[1]: is not valid Unicode (a lone surrogate)"),
])
def test_export_refuses_flags_that_cannot_be_stored(corpus, args, message):
    with pytest.raises(CommandError) as caught:
        call_command("export", corpus.name, *args, stdout=StringIO())
    assert str(caught.value) == message
    assert not Export.objects.exists()
