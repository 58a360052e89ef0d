"""Alignment engine benchmark (not a test): quality, throughput and CRF decoding speed.

Prints one JSON summary on stdout (progress on stderr)::

    python bench/align_bench.py [--data-dir ../shared/bench] [--limit N] [--skip-loop-above N]

* **Quality** — Task 1 / Task 2 P/R/F1 per method and dev file (SPEC §4 JSONL with ``gold``):
  every method with its default settings; the plain-threshold baselines with the threshold
  *tuned on the dev file itself* (best of "every pair ≥ t" and "best complex sentence per simple
  sentence ≥ t", the paper's protocol for similarity baselines); the CRF with defaults and with
  one threshold on its links' similarity (``min_link_score``) tuned the same way. ``crf_vs_best_baseline`` gives the Task 1 F1 margins.
  OneStop's gold is sparse and lexical (see the data README): read its precision as a lower bound.
* **Candidates** — capture rate of §3.2 candidate selection and candidates per simple sentence.
* **Paragraph alignment** — paragraph-link F1 with the paper's thresholds vs calibrated ones.
* **Throughput** — the ``crf`` method end to end on CPU with a cold embedding cache: article
  pairs/s, sentences encoded/s, share of time spent outside encoding, peak memory.
* **CRF decoding** — vectorised Viterbi vs :func:`crf_reference_viterbi` (Python loops over
  positions and states) for m = n = 50…400, same inputs, asserting the same label sequences.
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
import tracemalloc
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workers.engine.candidates import capture_rate, select_candidates  # noqa: E402
from workers.engine.crf import NeuralCRF, crf_reference_viterbi, path_score  # noqa: E402
from workers.engine.grouping import group_links, label_groups  # noqa: E402
from workers.engine.io import read_pairs  # noqa: E402
from workers.engine.methods import get_aligner  # noqa: E402
from workers.engine.metrics import evaluate, excluded_links, tune_threshold  # noqa: E402
from workers.engine.paragraph_alignment import calibrate  # noqa: E402
from workers.engine.similarity import CombinedSimilarity, get_similarity  # noqa: E402
from workers.engine.threshold import threshold_links  # noqa: E402
from workers.engine.types import Alignment  # noqa: E402

BASELINES = ["jaccard", "tfidf", "charngram", "sbert"]


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def r4(x: float) -> float:
    return round(float(x), 4)


def short(res: dict) -> dict:
    return {t: {k: r4(res[t][k]) for k in ("precision", "recall", "f1")} for t in ("task1", "task2")}


def tuned_baseline(pairs, sims) -> dict:
    """Best plain threshold on the data itself (all-pairs or best-per-simple-sentence rule)."""
    best = None
    for rule in ("all_pairs", "best_per_simple"):
        scores, is_gold, n_gold = [], [], 0
        for p, m in zip(pairs, sims):
            ex = excluded_links(p)
            gold = set(p.gold or ()) - ex
            n_gold += len(gold)
            if m.size == 0:
                continue
            if rule == "all_pairs":
                cand = [(c, s) for c in range(m.shape[0]) for s in range(m.shape[1])]
            else:
                cand = [(int(m[:, s].argmax()), s) for s in range(m.shape[1])]
            for link in cand:
                if link not in ex:
                    scores.append(float(m[link]))
                    is_gold.append(link in gold)
        t = tune_threshold(scores, is_gold, n_gold)
        if best is None or t.f1 > best["f1"]:
            best = {"rule": rule, "threshold": r4(t.threshold), "precision": r4(t.precision),
                    "recall": r4(t.recall), "f1": r4(t.f1)}
    return best


def crf_with(aligner, pairs, sims):
    return aligner.align_with_sims(pairs, sims)


def quality(datasets, sims_by, crf_aligner) -> dict:
    out = {}
    for name, pairs in datasets.items():
        log(f"quality on {name}")
        res: dict = {"n_pairs": len(pairs), "n_gold_links": sum(len(p.gold or ()) for p in pairs)}
        default, tuned = {}, {}
        for method in BASELINES:
            sims = sims_by[method][name]
            aligner = get_aligner(method)
            preds = []
            for p, m in zip(pairs, sims):
                groups = group_links(threshold_links(m, aligner.config))
                preds.append(Alignment(p.id, label_groups(
                    groups, p.complex.sentences, p.simple.sentences, m, aligner.similarity,
                    aligner.config.aligned_threshold)))
            default[method] = short(evaluate(preds, pairs))
            tuned[method] = tuned_baseline(pairs, sims)
        sims = sims_by["combined"][name]
        default["crf"] = short(evaluate(crf_with(crf_aligner, pairs, sims), pairs))
        # tuned like the baselines: one threshold on the similarity of the CRF's links
        # (config "min_link_score"), chosen for max Task 1 F1 on this data
        scores, is_gold, n_gold = [], [], 0
        for p, m, a in zip(pairs, sims, crf_with(crf_aligner, pairs, sims)):
            ex = excluded_links(p)
            gold = set(p.gold or ()) - ex
            n_gold += len(gold)
            for link in {lk for g in a.pairs for lk in g.links()} - ex:
                scores.append(float(m[link]))
                is_gold.append(link in gold)
        t = tune_threshold(scores, is_gold, n_gold)
        tuned["crf"] = {"min_link_score": r4(t.threshold), "precision": r4(t.precision),
                        "recall": r4(t.recall), "f1": r4(t.f1)}
        best_base = max(("sbert", "tfidf"), key=lambda m: tuned[m]["f1"])
        best_any = max(BASELINES, key=lambda m: tuned[m]["f1"])
        res["default_settings"] = default
        res["tuned_on_this_data"] = tuned
        res["crf_vs_best_baseline"] = {
            "best_sbert_tfidf_tuned": best_base,
            "best_sbert_tfidf_tuned_f1": tuned[best_base]["f1"],
            "crf_default_f1": default["crf"]["task1"]["f1"],
            "crf_tuned_f1": tuned["crf"]["f1"],
            "margin_crf_default": r4(default["crf"]["task1"]["f1"] - tuned[best_base]["f1"]),
            "margin_crf_tuned": r4(tuned["crf"]["f1"] - tuned[best_base]["f1"]),
            "best_any_baseline_tuned": best_any,
            "margin_crf_tuned_vs_best_any": r4(tuned["crf"]["f1"] - tuned[best_any]["f1"]),
        }
        # candidate selection (§3.2) with precomputed matrices of the three measures
        cands = []
        for k, p in enumerate(pairs):
            fake = [_Fixed(n, sims_by[n][name][k]) for n in ("charngram", "tfidf", "sbert")]
            cands.append(select_candidates(p, fake))
        res["candidates"] = {k: r4(v) for k, v in capture_rate(pairs, cands).items()}
        para = {}
        for variant in ("newsela", "wiki"):
            c = calibrate(pairs, sims=sims, variant=variant)
            para[variant] = {"default_f1": r4(c.default_f1), "calibrated_f1": r4(c.f1),
                             "thresholds": {k: r4(v) for k, v in c.as_dict()["thresholds"].items()}}
        res["paragraph_alignment"] = para
        res["crf_with_paragraph_alignment"] = short(evaluate(
            crf_paragraph(crf_aligner, pairs, sims), pairs))
        out[name] = res
    return out


def crf_paragraph(crf_aligner, pairs, sims):
    from workers.engine.methods.crf import CALIBRATED_NEWSELA
    from workers.engine.paragraph_alignment import align_paragraphs

    masked = []
    for p, s in zip(pairs, sims):
        if s.size:
            pa = align_paragraphs(s, p.complex.paragraph_index, p.simple.paragraph_index,
                                  thresholds=CALIBRATED_NEWSELA,
                                  n_complex_paragraphs=len(p.complex.paragraphs),
                                  n_simple_paragraphs=len(p.simple.paragraphs))
            s = np.where(pa.sentence_mask(p.complex.paragraph_index, p.simple.paragraph_index),
                         s, 0.0).astype(np.float32)
        masked.append(s)
    return crf_aligner.align_with_sims(pairs, masked)


class _Fixed:
    """A similarity 'model' returning a precomputed matrix (for candidate selection)."""

    def __init__(self, name, m):
        self.name, self.m = name, m

    def similarity(self, c, s):
        return self.m


def throughput(pairs) -> dict:
    """The crf method end to end with a cold embedding cache."""
    aligner = get_aligner("crf")
    sbert = next(m for m in aligner.similarity.parts if m.name == "sbert") \
        if isinstance(aligner.similarity, CombinedSimilarity) else aligner.similarity
    enc = sbert.encoder
    enc.clear_cache()
    n0, s0 = enc.n_encoded, enc.seconds_encoding
    tracemalloc.start()
    t0 = time.perf_counter()
    aligner.align(pairs)
    total = time.perf_counter() - t0
    _, peak_py = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    encoded = enc.n_encoded - n0
    enc_s = enc.seconds_encoding - s0
    n_sents = sum(len(p.complex) + len(p.simple) for p in pairs)
    return {
        "device": enc.device,
        "torch_threads": torch.get_num_threads(),
        "article_pairs": len(pairs),
        "sentences": n_sents,
        "seconds_total": r4(total),
        "seconds_encoding": r4(enc_s),
        "article_pairs_per_s": r4(len(pairs) / total),
        "sentences_encoded_per_s": r4(encoded / enc_s) if enc_s else None,
        "share_beyond_encoding": r4((total - enc_s) / total),
        "peak_python_alloc_mb": r4(peak_py / 2**20),
        "peak_rss_mb": r4(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def decode_speed(sizes, skip_loop_above: int) -> dict:
    crf = NeuralCRF()
    rng = np.random.default_rng(0)
    out = {}
    for n in sizes:
        sim = rng.random((n, n)).astype(np.float32)
        reps = 5 if n <= 200 else 3
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            labels = crf.decode([sim])[0]
            times.append(time.perf_counter() - t0)
        vec = statistics.median(times)
        row = {"vectorised_s": round(vec, 5)}
        if n <= skip_loop_above:
            with torch.no_grad():
                E = crf.emissions([sim])[0][0].numpy()
                T = crf.transitions(n + 1).numpy()
            t0 = time.perf_counter()
            ref = crf_reference_viterbi(E, T)
            loop = time.perf_counter() - t0
            t0 = time.perf_counter()
            ref_lists = crf_reference_viterbi(E, T, python_lists=True)
            loop_lists = time.perf_counter() - t0
            same = all(
                labels.tolist() == r
                or abs(path_score(E, T, labels) - path_score(E, T, r)) < 1e-4
                for r in (ref, ref_lists))
            assert same, f"vectorised and loop Viterbi disagree at n={n}"
            row.update({"loop_reference_style_s": round(loop, 4),
                        "speedup_vs_reference_style": round(loop / vec, 1),
                        "loop_python_lists_s": round(loop_lists, 4),
                        "speedup_vs_python_lists": round(loop_lists / vec, 1),
                        "same_output": same})
        out[str(n)] = row
        log(f"decode n={n}: {row}")
    # batched decoding: 16 article pairs of 50×50 in one call vs one by one
    sims = [rng.random((50, 50)).astype(np.float32) for _ in range(16)]
    t0 = time.perf_counter()
    crf.decode(sims)
    batched = time.perf_counter() - t0
    t0 = time.perf_counter()
    for s in sims:
        crf.decode([s])
    single = time.perf_counter() - t0
    out["batch16_n50"] = {"batched_s": round(batched, 5), "one_by_one_s": round(single, 5)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "bench"))
    ap.add_argument("--limit", type=int, default=None, help="article pairs per dev file")
    ap.add_argument("--skip-loop-above", type=int, default=400,
                    help="largest n for the (slow) Python-loop Viterbi")
    ap.add_argument("--sizes", default="50,100,200,400")
    args = ap.parse_args()
    t_start = time.perf_counter()
    files = sorted(Path(args.data_dir).glob("*.jsonl"))
    if not files:
        sys.exit(f"no *.jsonl in {args.data_dir}")
    datasets = {f.stem: read_pairs(f)[: args.limit] for f in files}

    log("similarity matrices")
    models = {n: get_similarity(n) for n in BASELINES + ["combined"]}
    sims_by: dict = {n: {} for n in models}
    for name, pairs in datasets.items():
        for n, model in models.items():
            sims_by[n][name] = [model.similarity(p.complex.sentences, p.simple.sentences)
                                for p in pairs]
    crf_aligner = get_aligner("crf")
    summary = {"data": {k: len(v) for k, v in datasets.items()}}
    summary["quality"] = quality(datasets, sims_by, crf_aligner)
    # pooled OneStop numbers (the three level pairs together)
    one = [k for k in datasets if k.startswith("onestop")]
    if one:
        # article ids repeat across level pairs: make them unique before pooling
        pairs = [replace(p, id=f"{k}/{p.id}") for k in one for p in datasets[k]]
        sims = {n: [m for k in one for m in sims_by[n][k]] for n in sims_by}
        pooled = {"tuned_on_this_data": {m: tuned_baseline(pairs, sims[m]) for m in BASELINES}}
        pooled["crf_default"] = short(evaluate(crf_with(crf_aligner, pairs, sims["combined"]),
                                               pairs))
        scores, is_gold, n_gold = [], [], 0
        for p, m, a in zip(pairs, sims["combined"], crf_with(crf_aligner, pairs, sims["combined"])):
            ex = excluded_links(p)
            gold = set(p.gold or ()) - ex
            n_gold += len(gold)
            for link in {lk for g in a.pairs for lk in g.links()} - ex:
                scores.append(float(m[link]))
                is_gold.append(link in gold)
        t = tune_threshold(scores, is_gold, n_gold)
        pooled["tuned_on_this_data"]["crf"] = {"min_link_score": r4(t.threshold),
                                               "precision": r4(t.precision),
                                               "recall": r4(t.recall), "f1": r4(t.f1)}
        summary["quality"]["onestop_pooled"] = pooled
    log("throughput")
    tp_name = "asset_docs_dev" if "asset_docs_dev" in datasets else next(iter(datasets))
    summary["throughput_crf_cold_cache"] = {"data": tp_name, **throughput(datasets[tp_name])}
    log("decode speed")
    sizes = [int(x) for x in args.sizes.split(",")]
    summary["crf_decode"] = decode_speed(sizes, args.skip_loop_above)
    summary["bench_seconds"] = round(time.perf_counter() - t_start, 1)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
