"""Aligner training (workers.engine.training) and its CLI, on a tiny model built here.

The pair model starts from a 2-layer BERT with 32 hidden units (the MiniLM tokenizer, random
weights), so a training run takes seconds; one slow test trains from the bundled MiniLM.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.engine.cases import one_sentence_case, structured_cases
from workers.engine.cli import main

ROOT = Path(__file__).resolve().parents[2]
FAST = {"epochs": 1, "crf_epochs": 5, "base_similarity": "charngram"}
PARTIAL = {"split": {(0, 0), (0, 1)}, "merge": {(3, 3), (4, 3)}}


def record(pair) -> dict:
    gold = [list(link) for link in pair.gold]
    labels = ["partial" if tuple(link) in PARTIAL.get(pair.id, ()) else "aligned" for link in gold]
    return {"id": pair.id, "complex": {"paragraphs": [list(p) for p in pair.complex.paragraphs]},
            "simple": {"paragraphs": [list(p) for p in pair.simple.paragraphs]},
            "gold": gold, "gold_labels": labels}


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory, minilm_path) -> str:
    """A 2-layer, 32-unit BERT saved in HF format (the MiniLM tokenizer, random weights)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    out = tmp_path_factory.mktemp("tiny-bert")
    tokenizer = AutoTokenizer.from_pretrained(minilm_path)
    tokenizer.save_pretrained(out)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=256)
    BertModel(config).save_pretrained(out)
    return str(out)


@pytest.fixture(scope="module")
def train_file(tmp_path_factory) -> Path:
    cases = structured_cases() + [one_sentence_case()]
    return write_jsonl(tmp_path_factory.mktemp("train") / "train.jsonl", [record(p) for p in cases])


def train(tmp: Path, train_file: Path, base: str, *extra: str, config: dict | None = None) -> int:
    return main(["train", "--method", "crf", "--input", str(train_file), "--output", str(tmp),
                 "--base", base, "--config", json.dumps(config or FAST), *extra])


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory, train_file, tiny_base) -> Path:
    out = tmp_path_factory.mktemp("trained") / "model"
    assert train(out, train_file, tiny_base, "--seed", "3") == 0
    return out


# ---------------------------------------------------------------------------- the model dir
@pytest.mark.slow
def test_training_writes_pair_model_crf_thresholds_and_manifest(model_dir, train_file):
    names = {p.name for p in model_dir.iterdir()}
    assert {"crf.pt", "crf.json", "thresholds.json", "manifest.json", "config.json",
            "model.safetensors", "tokenizer.json"} <= names
    manifest = json.loads((model_dir / "manifest.json").read_text())
    data = manifest["data"]
    ids = [json.loads(line)["id"] for line in train_file.read_text().splitlines()]
    assert sorted(data["train"]["ids"] + data["heldout"]["ids"]) == sorted(ids)
    assert not set(data["train"]["ids"]) & set(data["heldout"]["ids"])
    assert data["heldout_source"] == "input" and len(data["train"]["sha256"]) == 64
    assert manifest["seed"] == 3 and manifest["config"]["epochs"] == 1
    assert manifest["versions"]["torch"] and manifest["versions"]["sentence-transformers"]
    assert manifest["seconds"]["total"] > 0 and manifest["peak_rss_mb"] > 0
    assert len(manifest["metrics"]["pair_model_epochs"]) == 1
    assert [e["epoch"] for e in manifest["metrics"]["crf_epochs"]] == list(range(6))
    assert set(manifest["metrics"]["heldout"]) == {"trained", "untrained_crf"}
    thresholds = json.loads((model_dir / "thresholds.json").read_text())
    assert thresholds["config"] == manifest["thresholds"]
    assert thresholds["tuned_on"] == data["heldout"]["ids"]


@pytest.mark.slow
def test_the_pair_model_loads_as_a_plain_cross_encoder(model_dir):
    from sentence_transformers import CrossEncoder

    model = CrossEncoder(str(model_dir), device="cpu")
    probs = model.predict([("The council approved a plan.", "The council said yes to a plan.")],
                          apply_softmax=True)
    assert model.num_labels == 3
    assert model.config.id2label == {0: "not_aligned", 1: "partial", 2: "aligned"}
    assert np.asarray(probs).shape == (1, 3) and np.isclose(np.sum(probs), 1.0, atol=1e-4)


@pytest.mark.slow
def test_the_trained_crf_is_saved_with_its_weights(model_dir):
    from workers.engine.crf import NeuralCRF

    crf, extra = NeuralCRF.load(model_dir)
    assert extra["similarity_model"] == "."
    thresholds = json.loads((model_dir / "thresholds.json").read_text())["config"]
    assert extra["aligner_config"]["label_rule"] == thresholds["label_rule"] in ("similarity", "pair_model", "learnt")
    assert float(crf.sim_scale.detach()) != NeuralCRF().config.sim_scale  # moved by maximum likelihood


# ------------------------------------------------------------------------ align --model
def align_labels(model_dir: Path, data: Path, out: Path, config: dict | None = None) -> list[dict]:
    args = ["align", "--method", "crf", "--model", str(model_dir), "--input", str(data),
            "--output", str(out)]
    assert main(args + (["--config", json.dumps(config)] if config else [])) == 0
    return [p for line in out.read_text().splitlines() for p in json.loads(line)["pairs"]]


@pytest.mark.slow
def test_align_with_the_model_uses_the_pair_model_and_its_thresholds(model_dir, train_file, tmp_path):
    trained = align_labels(model_dir, train_file, tmp_path / "t.jsonl",
                           {"label_rule": "pair_model", "domain_check": False})
    assert trained and all("p_aligned" in p["features"] for p in trained)
    main(["align", "--method", "crf", "--input", str(train_file), "--output", str(tmp_path / "u.jsonl"),
          "--config", '{"similarity": "charngram"}'])
    untrained = [p for line in (tmp_path / "u.jsonl").read_text().splitlines()
                 for p in json.loads(line)["pairs"]]
    assert not any("p_aligned" in p["features"] for p in untrained)

    # thresholds.json decides the labels: edit it and the same model labels differently
    path = model_dir / "thresholds.json"
    saved = path.read_text()
    try:
        for cut, label in ((0.0, "aligned"), (1.01, "partial")):
            data = json.loads(saved)
            data["config"].update(aligned_threshold=cut, group_aligned_threshold=cut)
            path.write_text(json.dumps(data))
            labels = {p["label"] for p in align_labels(model_dir, train_file, tmp_path / "x.jsonl",
                                                       {"domain_check": False})}
            assert labels == {label}
    finally:
        path.write_text(saved)


@pytest.mark.slow
def test_align_config_overrides_the_tuned_thresholds(model_dir, train_file, tmp_path):
    pairs = align_labels(model_dir, train_file, tmp_path / "o.jsonl",
                         {"aligned_threshold": 1.01, "group_aligned_threshold": 1.01, "domain_check": False})
    assert pairs and {p["label"] for p in pairs} == {"partial"}


# -------------------------------------------------------------------------- determinism
def _weights(path: Path) -> dict[str, np.ndarray]:
    import torch
    from safetensors.numpy import load_file

    out = {f"pair.{k}": v for k, v in load_file(str(path / "model.safetensors")).items()}
    crf = torch.load(path / "crf.pt", weights_only=True)
    out.update({f"crf.{k}": v.numpy() for k, v in crf.items()})
    return out


@pytest.mark.slow
def test_training_is_deterministic_for_a_seed(model_dir, train_file, tiny_base, tmp_path):
    assert train(tmp_path / "again", train_file, tiny_base, "--seed", "3") == 0
    assert train(tmp_path / "other", train_file, tiny_base, "--seed", "4") == 0
    a, b, c = (_weights(p) for p in (model_dir, tmp_path / "again", tmp_path / "other"))
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    assert (model_dir / "thresholds.json").read_text() == (tmp_path / "again" / "thresholds.json").read_text()
    assert any(not np.array_equal(a[k], c[k]) for k in a)


# ---------------------------------------------------------------------------- bad input
def test_a_training_record_without_gold_is_refused_with_file_line_and_field(
        tmp_path, train_file, capsys):
    records = [json.loads(line) for line in train_file.read_text().splitlines()]
    del records[1]["gold"], records[1]["gold_labels"]
    bad = write_jsonl(tmp_path / "nogold.jsonl", records)
    assert main(["train", "--method", "crf", "--input", str(bad), "--output", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert "nogold.jsonl:2: field 'gold': is missing" in err
    assert "exhaustively annotated" in err and not (tmp_path / "m").exists()


@pytest.mark.parametrize("mutate, fragment", [
    (lambda r: r.pop("simple"), "bad.jsonl:3: field 'simple': is missing"),
    (lambda r: r.update(gold=[[0, 99]]), "bad.jsonl:3: field 'gold[0]': index out of range"),
    (lambda r: r.update(gold_labels=["aligned"]), "bad.jsonl:3: field 'gold_labels'"),
    (lambda r: r["gold_labels"].__setitem__(0, "maybe"), "bad.jsonl:3: field 'gold_labels[0]': unknown label"),
])
def test_malformed_training_records_exit_with_status_2(tmp_path, train_file, capsys, mutate, fragment):
    records = [json.loads(line) for line in train_file.read_text().splitlines()]
    mutate(records[2])
    bad = write_jsonl(tmp_path / "bad.jsonl", records)
    assert main(["train", "--method", "crf", "--input", str(bad), "--output", str(tmp_path / "m")]) == 2
    assert fragment in capsys.readouterr().err


def test_a_dev_file_is_checked_like_the_input(tmp_path, train_file, capsys):
    records = [json.loads(line) for line in train_file.read_text().splitlines()]
    del records[0]["gold"], records[0]["gold_labels"]
    dev = write_jsonl(tmp_path / "dev.jsonl", records[:1])
    rc = main(["train", "--method", "crf", "--input", str(train_file), "--dev", str(dev),
               "--output", str(tmp_path / "m")])
    assert rc == 2 and "dev.jsonl:1: field 'gold': is missing" in capsys.readouterr().err


@pytest.mark.parametrize("config, fragment", [
    ('{"epochs": 0}', "epochs: must be >= 1, got 0"),
    ('{"epoch": 2}', "valid:"),
    ("{nope", "--config is not valid JSON"),
])
def test_bad_training_options_exit_with_status_2(tmp_path, train_file, capsys, config, fragment):
    rc = main(["train", "--method", "crf", "--input", str(train_file), "--output", str(tmp_path / "m"),
               "--config", config])
    assert rc == 2 and fragment in capsys.readouterr().err


def test_training_data_without_any_link_is_refused(tmp_path, train_file, capsys):
    records = [json.loads(line) for line in train_file.read_text().splitlines()]
    for r in records:
        r["gold"], r["gold_labels"] = [], []
    empty = write_jsonl(tmp_path / "nolinks.jsonl", records)
    rc = main(["train", "--method", "crf", "--input", str(empty), "--output", str(tmp_path / "m")])
    assert rc == 2 and "no gold link" in capsys.readouterr().err


def test_only_the_crf_method_can_be_trained(tmp_path, train_file, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["train", "--method", "tfidf", "--input", str(train_file), "--output", str(tmp_path)])
    assert exc.value.code == 2 and "invalid choice" in capsys.readouterr().err


# ------------------------------------------------------------------------- Python API
@pytest.mark.slow
def test_the_python_api_reports_every_epoch_and_uses_the_dev_set(tmp_path, tiny_base):
    from workers.engine.training import EpochReport, train_aligner

    cases = structured_cases()
    reports: list[EpochReport] = []
    extra = [("Prices rose sharply.", "Prices went up a lot.", "aligned"),
             ("Prices rose sharply.", "The lighthouse is old.", "not")]
    manifest = train_aligner(cases[:3], tmp_path / "m", dev=cases[3:], base=tiny_base,
                             config={**FAST, "epochs": 2, "patience": 5}, seed=1,
                             progress=reports.append, extra_examples=extra)
    stages = [(r.stage, r.epoch) for r in reports]
    assert stages == [("pair_model", 1), ("pair_model", 2)] + [("crf", e) for e in range(6)]
    assert all(r.loss == r.loss and r.dev_f1 is not None for r in reports)  # not NaN
    assert "dev F1" in reports[0].line()
    assert manifest["data"]["heldout_source"] == "dev"
    assert manifest["data"]["heldout"]["ids"] == [cases[3].id]
    assert manifest["data"]["train"]["ids"] == [c.id for c in cases[:3]]
    assert manifest["data"]["extra_pair_examples"] == 2


def test_labelled_pair_examples_need_a_known_label(tmp_path):
    from workers.engine.training import train_aligner
    from workers.engine.training.data import ALIGNED, NOT_ALIGNED, labelled_pair_examples

    assert [e.label for e in labelled_pair_examples([("a", "b", "aligned"), ("a", "c", "not")])] == \
        [ALIGNED, NOT_ALIGNED]
    with pytest.raises(ValueError, match="unknown label 'good'.*aligned, partial, not"):
        train_aligner(structured_cases(), tmp_path / "m", extra_examples=[("a", "b", "good")])
    assert not (tmp_path / "m").exists()


@pytest.mark.slow
def test_training_can_be_cancelled_and_then_writes_nothing(tmp_path, tiny_base):
    from workers.engine.training import TrainingCancelled, train_aligner

    seen = []
    with pytest.raises(TrainingCancelled):
        train_aligner(structured_cases(), tmp_path / "m", base=tiny_base,
                      config={**FAST, "epochs": 3, "patience": 5}, progress=seen.append,
                      should_stop=lambda: len(seen) >= 1)
    assert len(seen) == 1 and not (tmp_path / "m").exists()


@pytest.mark.slow
def test_the_default_base_is_the_bundled_minilm(tmp_path, train_file):
    """One epoch from all-MiniLM-L6-v2 with the default (combined) base similarity."""
    from workers.engine import get_aligner
    from workers.engine.io import read_pairs

    assert main(["train", "--method", "crf", "--input", str(train_file), "--output",
                 str(tmp_path / "m"), "--config", '{"epochs": 1, "crf_epochs": 3}']) == 0
    manifest = json.loads((tmp_path / "m" / "manifest.json").read_text())
    assert manifest["base_model"].startswith("all-MiniLM-L6-v2")
    assert json.loads((tmp_path / "m" / "config.json").read_text())["hidden_size"] == 384
    result = get_aligner("crf", model=str(tmp_path / "m")).align(read_pairs(train_file))
    assert sum(len(a.pairs) for a in result) > 0


def test_importing_the_engine_loads_neither_torch_nor_the_trainer():
    code = ("import sys, workers.engine as e; assert callable(e.__getattr__);"
            "bad = [m for m in ('torch', 'transformers', 'sentence_transformers',"
            " 'workers.engine.training') if m in sys.modules]; assert not bad, bad;"
            "e.train_aligner; assert 'workers.engine.training' in sys.modules")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.slow
def test_training_reports_each_stage_and_every_batch(tmp_path, tiny_base):
    """``on_step``: a StepReport when each stage starts and after every pair-model batch (issue 18 §6)."""
    from workers.engine.training import STAGES, StepReport, train_aligner

    steps: list[StepReport] = []
    train_aligner(structured_cases(), tmp_path / "m", base=tiny_base,
                  config={**FAST, "epochs": 2, "patience": 5, "batch_size": 4}, seed=0, on_step=steps.append)
    started = [s.stage for s in steps if not s.steps]
    assert started == list(STAGES)
    batches = [s for s in steps if s.steps]
    assert len(batches) > 2 and [s.step for s in batches] == list(range(1, batches[0].steps + 1))
    assert {s.stage for s in batches} == {"pair_model"} and [s.epoch for s in batches][-1] == 2
    assert batches[0].line() == f"pair_model epoch 1/2, batch 1/{batches[0].steps}"


@pytest.mark.slow
def test_an_article_unlike_the_training_ones_is_aligned_as_the_untrained_aligner_would(model_dir, train_file, tmp_path):
    decisions = json.loads((model_dir / "decisions.json").read_text())
    assert decisions["domain"]["n_articles"] == 5 and decisions["domain"]["ranges"]
    records = [json.loads(line) for line in train_file.read_text().splitlines()]
    single = write_jsonl(tmp_path / "one.jsonl", [r for r in records if r["id"] == "one"])
    trained = align_labels(model_dir, single, tmp_path / "t.jsonl")
    assert main(["align", "--method", "crf", "--input", str(single), "--output", str(tmp_path / "u.jsonl"),
                 "--config", '{"similarity": "charngram"}']) == 0
    untrained = [p for line in (tmp_path / "u.jsonl").read_text().splitlines() for p in json.loads(line)["pairs"]]
    assert [(p["complex"], p["simple"], p["label"]) for p in trained] == \
        [(p["complex"], p["simple"], p["label"]) for p in untrained]
    # with the check off, the trained decisions apply
    checked_off = align_labels(model_dir, single, tmp_path / "o.jsonl", {"domain_check": False})
    assert checked_off and all("p_aligned_learnt" in p["features"] or "p_aligned" in p["features"]
                               or decisions["info"]["label_rule"] == "similarity" for p in checked_off)


@pytest.mark.slow
def test_the_manifest_says_what_the_last_stage_chose(model_dir):
    manifest = json.loads((model_dir / "manifest.json").read_text())
    chosen = manifest["decisions"]
    assert 0.0 <= chosen["pair_model_weight"] <= chosen["weight_cap"] < 1
    assert [w for w, _ in chosen["weight_heldout_task1"]][0] == 0.0  # the untrained emission is always a candidate
    assert chosen["label_rule"]["chosen"] in chosen["label_rule"]["heldout_task2"]
    assert "similarity" in chosen["label_rule"]["heldout_task2"]
    assert manifest["thresholds"]["pair_model_weight"] == chosen["pair_model_weight"]
    assert manifest["data"]["labeller_groups"] > 0


@pytest.mark.slow
def test_a_second_corpus_regularises_the_pair_model_only_and_the_manifest_says_so(tmp_path, train_file, tiny_base, model_dir):
    other = write_jsonl(tmp_path / "other.jsonl", [{**record(p), "id": f"other-{p.id}"} for p in structured_cases()[:2]])
    assert train(tmp_path / "reg", train_file, tiny_base, "--seed", "3", "--regulariser", str(other)) == 0
    manifest = json.loads((tmp_path / "reg" / "manifest.json").read_text())
    plain = json.loads((model_dir / "manifest.json").read_text())
    assert manifest["data"]["regulariser"]["ids"] == ["other-" + p.id for p in structured_cases()[:2]]
    assert plain["data"]["regulariser"] is None
    assert manifest["data"]["pair_examples"] > plain["data"]["pair_examples"]
    assert manifest["data"]["train"] == plain["data"]["train"]  # the CRF and decisions learn from the input alone
    assert main(["train", "--method", "crf", "--input", str(train_file), "--output", str(tmp_path / "bad"),
                 "--base", tiny_base, "--regulariser", str(tmp_path / "missing.jsonl")]) == 2
