"""MUSS mining and simplicity-filter benchmark (not a test). Prints one JSON object on stdout.

    python bench/mining_bench.py [--sequences 200000] [--encode-sample 1000] [--data-dir ../shared/bench]

**Mining** (SPEC §5.7, :func:`workers.engine.simplicity.muss_mining.mine_paraphrases`): a
deterministic synthetic corpus of documents whose sentences are recombined clauses over the 3,000
most frequent English words (``wordfreq``), with *planted paraphrase pairs* (a sentence in one
document, a rewrite of it — each content word swapped for another with probability 0.5, and in
30% of rewrites the two halves reordered — in another), so the recall of planted pairs can be
reported. The miner excludes a query's same-document windows before its top-k and margin (see
:mod:`~workers.engine.simplicity.muss_mining`; ``--reference-order`` reproduces the muss code's
order, margin first). The JSON also reports, for the planted pairs, what an *exact* miner with
the same parameters and embedding could reach (``planted_ceiling_exact_search``: partner among
the cross-document top-k, under the distance bound, under the relative bound, not
near-identical/contained), and the distance from random sequences to their nearest
cross-document neighbour: the generator draws about half of all tokens from the ~40 most frequent
words, so unrelated sentences are often closer than a planted rewrite (whose content words are
replaced by *random* words, so it is not a paraphrase a semantic encoder need rank first) and
the margin rejects most planted pairs — a limit of the corpus, not of the miner. With MiniLM
the same is measured on the documents of the first 150 planted pairs (``minilm_subset``). Sequences of adjacent
sentences ≤ 300 chars are extracted as MUSS does, until the target count is reached.

Embeddings: encoding 200k sequences with MiniLM on 2 CPU cores takes ~30 min, so the bundled
MiniLM's throughput is *measured on a sample* and extrapolated, and the index/search/filter stages
run on the full corpus with a cheaper **stand-in**: signed feature hashing of character 3–5-grams
(``sklearn`` ``HashingVectorizer``, i.e. a sparse random projection of the n-gram counts) into 384
dimensions — MiniLM's width, so index memory and search cost match — L2-normalised. The stand-in
finds surface paraphrases only; its recall on planted pairs is not MiniLM's.

Reported per stage: wall time, process peak RSS (``ru_maxrss``) and RSS growth; faiss index
settings (``IVF{nlist},SQ8`` above 50k sequences, nprobe 16); pairs/s; a projection for 10⁸
sequences on GPU workers (assumptions listed in the JSON).

**Filters** on real and demo data: pivot BLEU/FRES pass rate, Sum4Simp keep rate and
gain-classifier cut-off counts. Reference corpus: the ASSET-derived gold pairs of
``../shared/bench/asset_docs_dev.jsonl`` (human simplifications); targets: the OneStopEnglish
ADV→ELE gold pairs and TF-IDF alignments of the demo corpus (adv→int, int→ele). Without the
shared data only the demo/hand-made part runs.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workers.engine.simplicity import muss_mining  # noqa: E402
from workers.engine.simplicity.muss_mining import extract_sequences, mine_paraphrases  # noqa: E402

DIM = 384


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize() / 2**20


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --- synthetic corpus -------------------------------------------------------------------------

class Corpus:
    """Documents of recombined clauses with planted paraphrase pairs (deterministic)."""

    def __init__(self, seed: int = 0) -> None:
        from wordfreq import top_n_list

        self.rng = random.Random(seed)
        words = [w for w in top_n_list("en", 4000) if w.isalpha() and len(w) > 1]
        self.words = words[:3000]
        self.function = ["the", "a", "of", "in", "on", "with", "for", "to", "and", "by", "from", "at"]

    def clause(self) -> list[str]:
        r = self.rng
        n = r.randint(4, 9)
        out = []
        for i in range(n):
            if i and r.random() < 0.3:
                out.append(r.choice(self.function))
            # Zipf-like choice: frequent words more often
            out.append(self.words[min(len(self.words) - 1, int(r.paretovariate(1.1)) - 1 + r.randrange(0, 40) * (r.random() < 0.5))])
        return out

    def sentence(self) -> str:
        words = self.clause() + ([","] + self.clause() if self.rng.random() < 0.5 else [])
        text = " ".join(words).replace(" ,", ",")
        return text[0].upper() + text[1:] + "."

    def paraphrase(self, sentence: str) -> str:
        r = self.rng
        words = sentence.rstrip(".").lower().replace(",", "").split()
        words = [r.choice(self.words) if r.random() < 0.5 and w not in self.function else w for w in words]
        half = len(words) // 2
        words = words[half:] + ["and"] + words[:half] if r.random() < 0.3 else words
        text = " ".join(words)
        return text[0].upper() + text[1:] + "."

    def build(self, n_sequences: int, plant_every: int = 20) -> tuple[dict[str, list[str]], list[tuple[str, int, str, int]]]:
        docs: dict[str, list[str]] = {}
        planted: list[tuple[str, int, str, int]] = []
        total = 0
        pending: tuple[str, int, str] | None = None
        while total < n_sequences:
            doc_id = f"d{len(docs)}"
            sents = [self.sentence() for _ in range(self.rng.randint(4, 8))]
            if pending is not None:  # put the rewrite of an earlier document's sentence here
                j = self.rng.randrange(len(sents))
                sents[j] = pending[2]
                planted.append((pending[0], pending[1], doc_id, j))
                pending = None
            elif len(docs) % plant_every == 0:
                i = self.rng.randrange(len(sents))
                pending = (doc_id, i, self.paraphrase(sents[i]))
            docs[doc_id] = sents
            total += len(extract_sequences(doc_id, sents))
        return docs, planted


class HashingEncoder:
    """Stand-in embedding: signed hashing of char 3–5-grams into 384 dims, L2-normalised."""

    def __init__(self) -> None:
        from sklearn.feature_extraction.text import HashingVectorizer

        self.vec = HashingVectorizer(analyzer="char_wb", ngram_range=(3, 5), n_features=DIM, alternate_sign=True,
                                     norm="l2", lowercase=True)
        self.seconds = 0.0

    def encode(self, texts):
        t0 = time.perf_counter()
        out = self.vec.transform(texts).toarray().astype(np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.maximum(norms, 1e-12)
        self.seconds += time.perf_counter() - t0
        self.last = out
        return out



# --- planted-pair recall and what an exact miner could reach -------------------------------------

PARAMS = {"k": 8, "max_distance": 0.5, "max_relative": 0.6, "min_change": 0.2, "same_document": "any"}


def planted_recall(kept, planted) -> dict:
    """Share of planted sentence pairs mined exactly, and covered by a kept sequence pair."""
    found = set()
    covering: dict = {}
    for p in kept:
        for a, b in ((p.query, p.neighbour), (p.neighbour, p.query)):
            found.add((a.doc, a.start, a.end, b.doc, b.start, b.end))
            covering.setdefault((a.doc, b.doc), []).append((a.start, a.end, b.start, b.end))
    strict = sum(1 for da, ia, db, ib in planted if (da, ia, ia + 1, db, ib, ib + 1) in found)
    loose = sum(1 for da, ia, db, ib in planted
                if any(s1 <= ia < e1 and s2 <= ib < e2 for s1, e1, s2, e2 in covering.get((da, db), [])))
    n = max(1, len(planted))
    return {"exact_sentence_pair": round(strict / n, 4), "covered_by_a_kept_sequence_pair": round(loose / n, 4),
            "exact_hits": strict, "planted": len(planted)}


def planted_ceiling(seqs, vectors: np.ndarray, planted, params: dict = PARAMS) -> dict:
    """Exact (brute-force) check of each planted single-sentence pair against every criterion.

    For both directions (A queries B, B queries A): is the partner among the query's top-k
    *cross-document* neighbours, under the distance bound, under the relative-distance bound, and
    not removed as near-identical/contained? A pair is reachable when one direction passes all —
    the recall an exact-search miner with these parameters and this embedding could reach.
    """
    from workers.engine.simplicity.muss_mining import contained, near_identical

    pos = {(s.doc, s.start, s.end): i for i, s in enumerate(seqs)}
    doc_of = np.array([s.doc for s in seqs])
    k = params["k"]
    counts = dict.fromkeys(["pairs", "in_cross_doc_topk", "under_distance", "under_relative", "near_identical",
                            "contained", "reachable"], 0)
    dists = []
    for da, ia, db, ib in planted:
        a, b = pos.get((da, ia, ia + 1)), pos.get((db, ib, ib + 1))
        if a is None or b is None:
            continue
        counts["pairs"] += 1
        d_ab = float(max(0.0, 2 - 2 * vectors[a] @ vectors[b]))
        dists.append(d_ab)
        ni = near_identical(seqs[a].text, seqs[b].text, params["min_change"])
        ct = contained(seqs[a].text, seqs[b].text)
        counts["near_identical"] += ni
        counts["contained"] += ct
        flags = {"in_cross_doc_topk": False, "under_distance": False, "under_relative": False}
        for q, c in ((a, b), (b, a)):
            d = np.maximum(0.0, 2 - 2 * (vectors @ vectors[q]))
            d[doc_of == seqs[q].doc] = np.inf
            top = np.argpartition(d, k)[:k]
            if c not in set(top.tolist()):
                continue
            flags["in_cross_doc_topk"] = True
            rel = d[c] / d[top].mean()
            if d[c] <= params["max_distance"]:
                flags["under_distance"] = True
                if rel <= params["max_relative"]:
                    flags["under_relative"] = True
        for key, v in flags.items():
            counts[key] += v
        counts["reachable"] += flags["under_relative"] and not ni and not ct
    q = np.quantile(dists, [0.1, 0.25, 0.5, 0.75, 0.9]).round(3).tolist() if dists else []
    return {"counts": counts, "reachable_share": round(counts["reachable"] / max(1, counts["pairs"]), 4),
            "planted_sq_l2_quantiles_10_25_50_75_90": q}


def nearest_cross_doc_quantiles(seqs, vectors: np.ndarray, n: int = 300, seed: int = 0) -> list[float]:
    """Distance from random sequences to their nearest cross-document neighbour (how crowded)."""
    rng = np.random.default_rng(seed)
    doc_of = np.array([s.doc for s in seqs])
    out = []
    for q in rng.choice(len(seqs), size=min(n, len(seqs)), replace=False):
        d = np.maximum(0.0, 2 - 2 * (vectors @ vectors[q]))
        d[doc_of == seqs[q].doc] = np.inf
        out.append(float(d.min()))
    return np.quantile(out, [0.1, 0.5, 0.9]).round(3).tolist()


# --- mining benchmark ---------------------------------------------------------------------------

def mining_bench(n_sequences: int, encode_sample: int, exclude_first: bool = True) -> dict:
    t0 = time.perf_counter()
    docs, planted = Corpus(0).build(n_sequences)
    gen_s = time.perf_counter() - t0
    log(f"corpus: {len(docs)} documents, {len(planted)} planted pairs in {gen_s:.1f}s")

    stages: dict[str, dict] = {}
    marks = {"rss": rss_mb()}
    index_info: dict = {}

    def stage(name: str, seconds: float) -> None:
        now = rss_mb()
        stages[name] = {"seconds": round(seconds, 2), "peak_rss_mb": round(peak_mb(), 1),
                        "rss_growth_mb": round(now - marks["rss"], 1)}
        marks["rss"] = now

    real_build = muss_mining.build_index
    timing = {"index": 0.0, "search": 0.0}

    class TimedIndex:
        def __init__(self, index) -> None:
            self.index = index

        def search(self, x, k):
            t = time.perf_counter()
            out = self.index.search(x, k)
            timing["search"] = time.perf_counter() - t
            return out

    def timed_build(vectors, exact_limit=50_000, nprobe=16, seed=0):
        t = time.perf_counter()
        index = real_build(vectors, exact_limit, nprobe, seed)
        timing["index"] = time.perf_counter() - t
        index_info.update({"type": type(index).__name__, "ntotal": int(index.ntotal), "dim": int(index.d)})
        if hasattr(index, "nlist"):
            index_info.update({"factory": f"IVF{index.nlist},SQ8", "nlist": int(index.nlist), "nprobe": int(index.nprobe),
                               "bytes_per_vector": int(index.code_size)})
        stage("encode_stand_in", encoder.seconds)
        stage("index_build", timing["index"])
        return TimedIndex(index)

    encoder = HashingEncoder()
    muss_mining.build_index = timed_build
    try:
        t_all = time.perf_counter()
        kept, stats = mine_paraphrases(docs, encoder=encoder, same_document="any",
                                       exclude_same_document_first=exclude_first)
        total_s = time.perf_counter() - t_all
    finally:
        muss_mining.build_index = real_build
    filter_s = total_s - encoder.seconds - timing["index"] - timing["search"]
    stages["search"] = {"seconds": round(timing["search"], 2), "note": "search RSS is included in the filter row"}
    stage("search_and_filters", timing["search"] + filter_s)
    stages["filters"] = {"seconds": round(filter_s, 2), "note": "sequence extraction, noise filter and candidate filters"}
    del stages["search_and_filters"]

    t0 = time.perf_counter()
    seqs = [sq for doc_id, sents in docs.items() for sq in extract_sequences(doc_id, sents)
            if not muss_mining.is_noisy(sq.text)]
    ceiling = planted_ceiling(seqs, encoder.last, planted)
    ceiling["nearest_cross_doc_sq_l2_of_random_sequences_10_50_90"] = nearest_cross_doc_quantiles(seqs, encoder.last)
    ceiling["seconds"] = round(time.perf_counter() - t0, 1)
    log(f"ceiling: {ceiling}")

    n_seq = stats["sequences"]
    return {
        "corpus": {"documents": len(docs), "sentences": sum(len(s) for s in docs.values()), "sequences": n_seq,
                   "noisy_dropped": stats["noisy"], "planted_pairs": len(planted), "generation_s": round(gen_s, 1),
                   "generator": "recombined clauses over wordfreq's top-3000 English words; a planted rewrite swaps each "
                                "content word with p=0.5 and reorders the two halves in 30% of cases"},
        "embedding": {"used": "stand-in: signed hashing of char 3-5-grams into 384 dims (sklearn HashingVectorizer), "
                              "L2-normalised — a sparse random projection of n-gram counts, not a semantic encoder",
                      "stand_in_sequences_per_s": round(n_seq / max(encoder.seconds, 1e-9), 1)},
        "index": index_info,
        "params": {**PARAMS, "max_chars": 300, "max_punctuation": 0.1,
                   "exclude_same_document_first": exclude_first},
        "stages": stages,
        "total_s_excluding_encoding": round(total_s - encoder.seconds, 2),
        "counts": stats,
        "pairs_kept": len(kept),
        "pairs_per_s": round(len(kept) / max(total_s - encoder.seconds, 1e-9), 1),
        "candidates_per_s": round(stats["candidates"] / max(total_s - encoder.seconds, 1e-9), 1),
        "sequences_per_s_index_search_filter": round(n_seq / max(total_s - encoder.seconds, 1e-9), 1),
        "planted_recall": planted_recall(kept, planted),
        "planted_ceiling_exact_search": ceiling,
        "peak_rss_mb": round(peak_mb(), 1),
    }, docs, planted


def minilm_subset(docs: dict[str, list[str]], planted, n_pairs: int = 150) -> dict:
    """Mine with the bundled MiniLM on the documents of the first ``n_pairs`` planted pairs (exact index)."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from workers.engine.simplicity.embedding import default_encoder

    subset = planted[:n_pairs]
    names = sorted({d for da, _, db, _ in subset for d in (da, db)}, key=lambda d: int(d[1:]))
    sub_docs = {d: docs[d] for d in names}
    enc = default_encoder()

    class Keep:
        def encode(self, texts):
            self.last = enc.encode(texts)
            return self.last

    keep = Keep()
    t0 = time.perf_counter()
    kept, stats = mine_paraphrases(sub_docs, encoder=keep, **PARAMS)
    secs = time.perf_counter() - t0
    seqs = [sq for doc_id, sents in sub_docs.items() for sq in extract_sequences(doc_id, sents)
            if not muss_mining.is_noisy(sq.text)]
    return {"model": "bundled all-MiniLM-L6-v2 (cpu)", "documents": len(sub_docs), "planted_pairs": len(subset),
            "note": "only the documents that hold planted pairs: far fewer distractors than the full corpus",
            "seconds": round(secs, 1), "counts": stats, "pairs_kept": len(kept),
            "planted_recall": planted_recall(kept, subset),
            "planted_ceiling_exact_search": {
                **planted_ceiling(seqs, keep.last, subset),
                "nearest_cross_doc_sq_l2_of_random_sequences_10_50_90": nearest_cross_doc_quantiles(seqs, keep.last)}}


def minilm_throughput(docs: dict[str, list[str]], n: int) -> dict:
    """Measure the bundled MiniLM on ``n`` real sequences of the corpus (CPU)."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from workers.engine.simplicity.embedding import default_encoder

    texts = []
    for doc_id, sents in docs.items():
        texts += [s.text for s in extract_sequences(doc_id, sents)]
        if len(texts) >= n:
            break
    texts = texts[:n]
    enc = default_encoder()
    enc.encode(texts[:32])  # warm-up / model load
    t0 = time.perf_counter()
    enc.encode(texts)
    secs = time.perf_counter() - t0
    return {"model": "bundled all-MiniLM-L6-v2", "device": "cpu", "threads": torch.get_num_threads(),
            "sequences": len(texts), "seconds": round(secs, 2), "sequences_per_s": round(len(texts) / secs, 1),
            "mean_chars": round(float(np.mean([len(t) for t in texts])), 1)}


def projection(mining: dict, minilm: dict, n_target: float = 1e8) -> dict:
    """Cost of 10⁸ sequences: CPU extrapolation and a GPU-worker estimate (assumptions stated)."""
    n = mining["corpus"]["sequences"]
    st = mining["stages"]
    gpu_encode_per_s = 10_000.0  # assumption, see below
    gpu_search_qps = 20_000.0
    nlist = int(4 * math.sqrt(n_target))
    scanned_here = mining["index"].get("nprobe", 16) * n / max(1, mining["index"].get("nlist", 1))
    scanned_there = 16 * n_target / nlist
    cpu_search_s = st["search"]["seconds"] * (n_target / n) * (scanned_there / scanned_here)
    cpu = {
        "encode_minilm_hours": round(n_target / minilm["sequences_per_s"] / 3600, 1),
        "search_hours": round(cpu_search_s / 3600, 1),
        "filters_hours": round(st["filters"]["seconds"] * n_target / n / 3600, 1),
        "note": "one 2-core machine; search scales with queries × nprobe × N/nlist (nlist = 4√N)",
    }
    workers = 8
    encode_h = n_target / gpu_encode_per_s / 3600
    search_h = n_target / gpu_search_qps / 3600
    filters_h = st["filters"]["seconds"] * n_target / n / 3600
    return {
        "sequences": n_target,
        "cpu_extrapolation": cpu,
        "gpu_workers": {
            "assumptions": {
                "encode": f"MiniLM-L6 fp16 on one H100-class GPU ≈ {gpu_encode_per_s:.0f} sequences/s (≤ 128 word pieces, "
                          "batch 512); measured here on CPU: " f"{minilm['sequences_per_s']} /s",
                "index": f"faiss GPU IVF{nlist},SQ8 (nlist = 4√N), trained on a 1M sample; SQ8 = {DIM} B/vector → "
                         f"{n_target * DIM / 1e9:.0f} GB codes (+0.8 GB ids), so shard over GPUs or use PQ48 "
                         f"({n_target * 48 / 1e9:.1f} GB)",
                "search": f"k=8, nprobe=16 ≈ {gpu_search_qps:.0f} queries/s per GPU at N = 1e8",
                "filters": "the Python candidate filters parallelise over CPU cores of the workers "
                           "(measured rate here × 1 core per worker)",
                "workers": workers,
            },
            "encode_gpu_hours": round(encode_h, 1),
            "search_gpu_hours": round(search_h, 1),
            "filters_cpu_hours": round(filters_h, 1),
            "wall_hours_with_workers": round((encode_h + search_h + filters_h) / workers, 1),
        },
    }


# --- filter pass rates --------------------------------------------------------------------------

def _gold_pairs(path: Path) -> list[tuple[str, str]]:
    """Non-identical 1:1 gold pairs of a SPEC §4 JSONL file with ``gold``."""
    from workers.engine.io import parse_pair

    out = []
    for line in path.open(encoding="utf-8"):
        rec = json.loads(line)
        ap = parse_pair(rec)
        for ci, si in rec.get("gold", []):
            c, s = ap.complex.sentences[ci], ap.simple.sentences[si]
            if c.strip() != s.strip():
                out.append((c, s))
    return out


def _demo_pairs() -> list[tuple[str, str]]:
    from workers.engine.io import parse_pair
    from workers.engine.methods import get_aligner

    folder = ROOT / "annotation" / "fixtures" / "demo_corpus"
    pairs = []
    aligner = get_aligner("tfidf")
    for stem in sorted({p.name.rsplit("-", 1)[0] for p in folder.glob("*.txt")}):
        text = {lv: (folder / f"{stem}-{lv}.txt").read_text() for lv in ("adv", "int", "ele")}
        for c, s in (("adv", "int"), ("int", "ele")):
            ap = parse_pair({"id": f"{stem}-{c}-{s}", "complex": {"text": text[c]}, "simple": {"text": text[s]}})
            for al in aligner.align([ap]):
                for p in al.pairs:
                    pairs.append((" ".join(ap.complex.sentences[i] for i in p.complex),
                                  " ".join(ap.simple.sentences[i] for i in p.simple)))
    return pairs


def filter_bench(data_dir: Path) -> dict:
    from workers.engine.simplicity.gain_classifier import GainClassifier, cutoff_counts
    from workers.engine.simplicity.gain_features import GainFeaturizer
    from workers.engine.simplicity.pairs import TextPair
    from workers.engine.simplicity.pivot import select_pairs
    from workers.engine.simplicity.sum4simp_filter import Sum4SimpFilter

    targets = {"demo_tfidf_pairs": _demo_pairs()}
    asset, onestop = data_dir / "asset_docs_dev.jsonl", data_dir / "onestop_dev_ADV-ELE.jsonl"
    if asset.exists() and onestop.exists():
        reference = _gold_pairs(asset)
        targets["onestop_adv_ele_gold"] = _gold_pairs(onestop)
        ref_name = "ASSET-derived gold pairs (human simplifications), identical pairs removed"
    else:
        reference = [(c, s) for c, s in targets["demo_tfidf_pairs"]]
        ref_name = "demo pairs themselves (shared bench data missing)"
    t0 = time.perf_counter()
    flt = Sum4SimpFilter.fit([TextPair(c, s) for c, s in reference])
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    clf = GainClassifier.train(reference, featurizer=GainFeaturizer("en", parser=None), epochs=50)
    train_s = time.perf_counter() - t0
    out = {"reference": {"corpus": ref_name, "pairs": len(reference), "sum4simp_fit_s": round(fit_s, 2),
                         "sum4simp_fits": {k: [round(v.mu, 4), round(v.sigma, 4)] for k, v in flt.fits.items()},
                         "gain_classifier_train_s": round(train_s, 2), "gain_classifier_metrics": clf.metrics,
                         "gain_features": list(clf.feature_names)},
           "targets": {}}
    for name, pairs in targets.items():
        t0 = time.perf_counter()
        kept, counts = select_pairs(pairs)
        pivot_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        keep = [flt.keep(c, s) for c, s in pairs]
        s4s_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        probs = clf.predict_proba(pairs)
        gain_s = time.perf_counter() - t0
        n = max(1, len(pairs))
        out["targets"][name] = {
            "pairs": len(pairs),
            "pivot": {"h_bleu": 15, "h_fres": 10, "counts": counts, "pass_rate": round(counts["kept"] / n, 4),
                      "pairs_per_s": round(len(pairs) / max(pivot_s, 1e-9), 1)},
            "sum4simp": {"threshold": flt.threshold, "attributes": sorted(flt.fits), "kept": int(sum(keep)),
                         "keep_rate": round(sum(keep) / n, 4), "pairs_per_s": round(len(pairs) / max(s4s_s, 1e-9), 1)},
            "gain_classifier": {"cutoff_counts": cutoff_counts(probs)["all"], "mean_prob": round(float(np.mean(probs)), 4),
                                "swapped_cutoff_counts": cutoff_counts(clf.predict_proba([(s, c) for c, s in pairs]))["all"],
                                "pairs_per_s": round(len(pairs) / max(gain_s, 1e-9), 1)},
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sequences", type=int, default=200_000)
    ap.add_argument("--encode-sample", type=int, default=1000)
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "bench")
    ap.add_argument("--skip-minilm", action="store_true")
    ap.add_argument("--minilm-pairs", type=int, default=150, help="planted pairs in the MiniLM subset (0 = skip)")
    ap.add_argument("--reference-order", action="store_true",
                    help="margin on the raw top-k, same-document pairs dropped afterwards (muss reference code)")
    args = ap.parse_args()
    import faiss

    started = time.perf_counter()
    mining, docs, planted = mining_bench(args.sequences, args.encode_sample, not args.reference_order)
    log(f"mining done: {mining['pairs_kept']} pairs")
    minilm = ({"skipped": True, "sequences_per_s": 115.0, "note": "value measured earlier on this machine"}
              if args.skip_minilm else minilm_throughput(docs, args.encode_sample))
    minilm["extrapolated_seconds_for_corpus"] = round(mining["corpus"]["sequences"] / minilm["sequences_per_s"], 1)
    log(f"minilm: {minilm.get('sequences_per_s')} seq/s")
    if args.minilm_pairs and not args.skip_minilm:
        mining["minilm_subset"] = minilm_subset(docs, planted, args.minilm_pairs)
        log(f"minilm subset: {mining['minilm_subset']['planted_recall']}")
    filters = filter_bench(args.data_dir)
    import os

    result = {
        "machine": {"cpu_cores": os.cpu_count(), "faiss": faiss.__version__, "faiss_threads": faiss.omp_get_max_threads()},
        "mining": mining,
        "minilm_encoding": minilm,
        "projection_1e8": projection(mining, minilm),
        "filters": filters,
        "total_s": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
