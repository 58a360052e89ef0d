from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from workers.engine.cli import main

DATA = Path(__file__).parent / "data" / "tiny.jsonl"
ROOT = Path(__file__).resolve().parents[2]


def test_align_then_evaluate_in_process(tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    assert main(["align", "--method", "tfidf", "--input", str(DATA), "--output", str(out)]) == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["id"] for x in lines] == [json.loads(x)["id"] for x in DATA.read_text().splitlines()]
    assert all(set(p) >= {"complex", "simple", "label", "score"} for x in lines for p in x["pairs"])
    capsys.readouterr()
    assert main(["evaluate", "--pred", str(out), "--gold", str(DATA)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    result = json.loads(last)
    assert result["task1"]["f1"] >= 0.9 and "task2" in result


def test_the_crf_runs_from_the_command_line_as_a_module(tmp_path):
    out = tmp_path / "out.jsonl"
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    proc = subprocess.run(
        [sys.executable, "-m", "workers.engine", "align", "--method", "crf", "--input", str(DATA),
         "--output", str(out), "--config", '{"similarity": "charngram"}'],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "100.0%" in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "workers.engine", "evaluate", "--pred", str(out), "--gold", str(DATA)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1])["task1"]["recall"] >= 0.9


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--config", "{bad"], "--config is not valid JSON"),
        (["--config", "[1]"], "must be a JSON object"),
        (["--config", '{"nope": 1}'], "valid:"),
    ],
)
def test_bad_options_exit_with_status_2(tmp_path, capsys, args, fragment):
    rc = main(["align", "--method", "tfidf", "--input", str(DATA),
               "--output", str(tmp_path / "o.jsonl"), *args])
    assert rc == 2
    assert fragment in capsys.readouterr().err


def test_malformed_input_names_file_line_and_field(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    good = DATA.read_text().splitlines()[0]
    bad.write_text(good + "\n" + json.dumps({"id": "x", "complex": {"paragraphs": [["a"]]}}) + "\n")
    rc = main(["align", "--method", "tfidf", "--input", str(bad), "--output", str(tmp_path / "o")])
    assert rc == 2
    err = capsys.readouterr().err
    assert "bad.jsonl:2:" in err and "'simple'" in err


def test_a_missing_input_file_is_reported(tmp_path, capsys):
    rc = main(["align", "--method", "tfidf", "--input", str(tmp_path / "none.jsonl"),
               "--output", str(tmp_path / "o")])
    assert rc == 2 and "no such file" in capsys.readouterr().err


def test_evaluate_needs_gold(tmp_path, capsys):
    nogold = tmp_path / "g.jsonl"
    rec = json.loads(DATA.read_text().splitlines()[0])
    rec.pop("gold")
    nogold.write_text(json.dumps(rec) + "\n")
    rc = main(["evaluate", "--pred", str(nogold), "--gold", str(nogold)])
    assert rc == 2 and "no record has a 'gold' field" in capsys.readouterr().err


def test_an_unknown_method_is_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["align", "--method", "magic", "--input", "a", "--output", "b"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_the_engine_cli_offers_the_pair_level_sari_metric(tmp_path, capsys):
    (tmp_path / "o.txt").write_text("The cat sat on the mat .\n")
    (tmp_path / "s.txt").write_text("The cat sat .\n")
    (tmp_path / "r.txt").write_text("The cat sat .\n")
    code = main(["metric", "sari", "--orig", str(tmp_path / "o.txt"), "--sys", str(tmp_path / "s.txt"),
                 "--refs", str(tmp_path / "r.txt")])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0
    # The system equals the single reference, so every operation is right where it happens: all
    # deletions (100). The new 2-4-grams ("sat .", ...) are right, but no unigram is added (n=1 F1
    # is 0: add = 75), and no 4-gram is kept ("the cat sat ." is not in the original: keep = 75).
    assert result == {"sari": pytest.approx(250 / 3), "add": 75.0, "keep": 75.0, "del": 100.0}


def test_the_engine_cli_scores_a_pairs_file(tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"id": "p1", "complex": "The committee postponed the decision indefinitely.",
                                 "simple": "The group delayed the decision.", "refs": ["The group delayed the decision."]}) + "\n")
    out = tmp_path / "out.jsonl"
    assert main(["score", "--input", str(pairs), "--output", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["id"] == "p1" and "attributes" in record
    attributes = record["attributes"]
    assert 0 < attributes["char_ratio"] < 1 and attributes["fres_gain"] > 0 and attributes["sari"] > 50
