"""score_pairs and the ``score`` / ``metric sari`` subcommands."""
from __future__ import annotations

import json

import pytest

from workers.engine.simplicity.cli import main
from workers.engine.simplicity.pairs import TextPair
from workers.engine.simplicity.sari import corpus_sari
from workers.engine.simplicity.score import score_pairs

PAIRS = [
    TextPair("The committee unanimously ratified the comprehensive legislation yesterday.",
             "The committee passed the law yesterday.", ("The committee approved the law yesterday.",), "p1"),
    TextPair("Precipitation was exceptionally abundant throughout April.", "It rained a lot in April.",
             ("There was a lot of rain in April.",), "p2"),
    TextPair("He subsequently relocated to the metropolis.", "Then he moved to the city.", ("He moved to the city.",), "p3"),
]


def test_score_pairs_covers_every_section_and_reports_what_it_skipped():
    report = score_pairs(PAIRS, reference=PAIRS, parser=None)
    row = report.attributes[0]
    for key in ("len", "comp", "freq", "sari", "t_len", "T", "s4s_keep",  # §5.4
                "gain_sl", "gain_nw", "gain_wer", "gain_bleu", "gain_cefr",  # §5.5
                "bleu", "fres_complex", "fres_simple", "fres_gain", "pivot_keep",  # §5.6
                "char_ratio", "lev_sim", "word_rank_ratio"):  # §5.7
        assert key in row, key
    assert "gain_mdt" in report.skipped and "dep_depth_ratio" in report.skipped
    assert "gain_prob" in report.skipped


def test_without_a_reference_there_are_no_t_scores_and_it_says_why():
    report = score_pairs(PAIRS[:1], parser=None)
    assert "T" not in report.attributes[0] and "freq" not in report.attributes[0]
    assert "reference" in report.skipped["T"]


def test_metric_sari_cli_prints_corpus_sari(tmp_path, capsys):
    orig = ["About 95 species are currently accepted .", "The cat perched on the mat ."]
    sys = ["About 95 species are now accepted .", "The cat sat on the mat ."]
    refs = [["About 95 species are now known .", "The cat sat on the mat ."],
            ["95 species are now accepted .", "A cat sat on a mat ."]]
    for name, lines in (("o", orig), ("s", sys), ("r1", refs[0]), ("r2", refs[1])):
        (tmp_path / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rc = main(["metric", "sari", "--orig", str(tmp_path / "o.txt"), "--sys", str(tmp_path / "s.txt"),
               "--refs", str(tmp_path / "r1.txt"), str(tmp_path / "r2.txt")])
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rc == 0 and out == pytest.approx(corpus_sari(orig, sys, refs))
    (tmp_path / "short.txt").write_text("one line\n", encoding="utf-8")
    rc = main(["metric", "sari", "--orig", str(tmp_path / "o.txt"), "--sys", str(tmp_path / "s.txt"),
               "--refs", str(tmp_path / "short.txt")])
    assert rc == 2 and "reference stream 0" in capsys.readouterr().err


def test_score_cli_writes_attributes_per_pair(tmp_path, capsys):
    src = tmp_path / "pairs.jsonl"
    src.write_text("\n".join(json.dumps({"id": p.id, "complex": p.complex, "simple": p.simple, "refs": list(p.refs)})
                             for p in PAIRS) + "\n", encoding="utf-8")
    rc = main(["score", "--input", str(src), "--output", str(tmp_path / "out.jsonl"),
               "--reference", str(src), "--parser", "none"])
    assert rc == 0
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == ["p1", "p2", "p3"]
    assert rows[1]["attributes"]["fres_gain"] > 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["pairs"] == 3 and "gain_mdt" in summary["skipped"]
    src.write_text('{"id": "x", "complex": 3}\n', encoding="utf-8")
    assert main(["score", "--input", str(src), "--output", str(tmp_path / "o2.jsonl")]) == 2
    assert "'complex' must be a string" in capsys.readouterr().err
