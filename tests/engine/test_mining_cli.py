"""``python -m workers.engine mine``: the DOCS → PAIRS JSONL contract (SPEC §4)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.engine.test_mining import HashedWords
from workers.engine.cli import main

ROOT = Path(__file__).resolve().parents[2]
DOCS = [
    {"id": "adv-1", "paragraphs": [["The committee approved the controversial proposal after a lengthy debate on Tuesday.",
                                    "Critics said the plan would raise taxes for most families."]]},
    {"id": "ele-1", "text": "After a long debate on Tuesday, the committee approved the proposal.\n\n"
                            "Critics said the plan would make taxes higher for most families."},
    {"id": 7, "paragraphs": [["Penguins live in the southern hemisphere.", "They cannot fly but swim very well."]],
     "language": "en"},
]


def _write(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture
def stand_in_encoder(monkeypatch):
    monkeypatch.setattr("workers.engine.simplicity.embedding.default_encoder", lambda model=None, device=None: HashedWords())


def _check_contract(out: Path, docs) -> list[dict]:
    sentences = {str(d["id"]): [s for p in d.get("paragraphs", []) for s in p] for d in docs}
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    for row in rows:
        assert set(row) == {"id", "score", "complex", "simple"}
        assert isinstance(row["score"], float) and -1.0 <= row["score"] <= 1.0
        for side in ("complex", "simple"):
            assert set(row[side]) == {"document", "sentences", "text"}
            doc = row[side]["document"]
            assert isinstance(doc, str) and doc in {str(d["id"]) for d in docs}
            idx = row[side]["sentences"]
            assert idx == sorted(idx) and idx == list(range(idx[0], idx[-1] + 1))  # adjacent sentences
            if sentences[doc]:
                assert row[side]["text"] == " ".join(sentences[doc][i] for i in idx)
    assert len({r["id"] for r in rows}) == len(rows)
    return rows


def test_mine_writes_one_oriented_pair_per_line(tmp_path, capsys, stand_in_encoder):
    out = tmp_path / "pairs.jsonl"
    rc = main(["mine", "--input", str(_write(tmp_path / "docs.jsonl", DOCS)), "--output", str(out),
               "--config", '{"max_distance": 1.2, "max_relative": 0.95}'])
    assert rc == 0, capsys.readouterr().err
    rows = _check_contract(out, DOCS)
    tax = [r for r in rows if {r["complex"]["document"], r["simple"]["document"]} == {"adv-1", "ele-1"}]
    assert tax, rows
    assert "wrote" in capsys.readouterr().err


def test_a_work_folder_is_kept_and_a_second_run_resumes_from_it(tmp_path, stand_in_encoder):
    docs = _write(tmp_path / "docs.jsonl", DOCS)
    args = ["mine", "--input", str(docs), "--config", '{"max_distance": 1.2, "max_relative": 0.95}',
            "--workdir", str(tmp_path / "job")]
    assert main([*args, "--output", str(tmp_path / "a.jsonl")]) == 0
    stamp = (tmp_path / "job" / "pairs.jsonl").stat().st_mtime_ns
    assert main([*args, "--output", str(tmp_path / "b.jsonl")]) == 0
    assert (tmp_path / "job" / "pairs.jsonl").stat().st_mtime_ns == stamp  # nothing redone
    assert (tmp_path / "a.jsonl").read_text() == (tmp_path / "b.jsonl").read_text()


@pytest.mark.parametrize("record, fragment", [
    ({"id": "x", "paragraphs": [[1]]}, ":2: field 'paragraphs[0][0]': must be a string"),
    ({"id": "x"}, ":2: field 'text': give exactly one of 'paragraphs' or 'text'"),
    ({"text": "A."}, ":2: field 'id': is missing"),
    ({"id": "adv-1", "text": "A."}, ":2: field 'id': duplicate id 'adv-1' (first on line 1)"),
    ({"id": "x", "text": "A.", "language": "tlh"}, ":2: field 'language': unsupported language"),
    ("not an object", ":2: a record must be a JSON object"),
])
def test_bad_documents_exit_with_status_2_naming_file_line_and_field(tmp_path, capsys, record, fragment):
    docs = _write(tmp_path / "docs.jsonl", [DOCS[0], record])
    assert main(["mine", "--input", str(docs), "--output", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {docs}{fragment}"), err


def test_bad_options_and_missing_files_exit_with_status_2(tmp_path, capsys):
    docs = _write(tmp_path / "docs.jsonl", DOCS)
    assert main(["mine", "--input", str(docs), "--output", str(tmp_path / "o.jsonl"), "--config", '{"k": -1}']) == 2
    assert "k: must be >= 1, got -1" in capsys.readouterr().err
    assert main(["mine", "--input", str(tmp_path / "none.jsonl"), "--output", str(tmp_path / "o.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "broken.jsonl").write_text('{"id": "a", "text": "A."}\n{"id": \n')
    assert main(["mine", "--input", str(tmp_path / "broken.jsonl"), "--output", str(tmp_path / "o.jsonl")]) == 2
    assert f"{tmp_path / 'broken.jsonl'}:2: invalid JSON" in capsys.readouterr().err


@pytest.mark.slow
def test_mine_runs_with_the_bundled_minilm_as_a_module_with_two_workers(tmp_path):
    docs = _write(tmp_path / "docs.jsonl", DOCS)
    out = tmp_path / "pairs.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "workers.engine", "mine", "--input", str(docs), "--output", str(out),
         "--workers", "2", "--config", '{"shard_size": 3}'],
        cwd=ROOT, env=dict(os.environ, HF_HUB_OFFLINE="1"), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    rows = _check_contract(out, DOCS)
    # MiniLM: the committee sentences (cosine ≈ 0.9) and the tax sentences (≈ 0.97) pair up
    found = {(r["complex"]["document"], tuple(r["complex"]["sentences"]), r["simple"]["document"],
              tuple(r["simple"]["sentences"])) for r in rows}
    assert ("adv-1", (0,), "ele-1", (0,)) in found
    assert any(1 in c and 1 in s for _, c, _, s in found)
    assert all(r["score"] >= 0.75 for r in rows)
    assert not any("7" in (r["complex"]["document"], r["simple"]["document"]) for r in rows)
