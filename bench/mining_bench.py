"""MUSS corpus-mining benchmark (not a test). Prints one JSON object on stdout, progress on stderr.

    python bench/mining_bench.py [--data-dir ../shared/bench] [--sequences 200000] [--budget-minutes 30]
                                 [--skip-onestop] [--skip-scale] [--skip-filters] [--workdir DIR]

Every mining run goes through the chunked job of :mod:`workers.engine.mining` (plan → encode shards →
index → search shards → merge; the same chunks the app's Celery tasks run) with **real encoder
embeddings**: the bundled all-MiniLM-L6-v2 on this machine's CPU.

1. **OneStopEnglish** (``onestop``): every document of ``onestop_dev_{ADV-ELE,ADV-INT,ELE-INT}.jsonl``
   — the advanced, intermediate and elementary version of 38 articles — pooled as 114 unrelated
   documents. Ids are opaque (``doc000``…, in a shuffled order), so the miner cannot know which
   documents are versions of one article. Reported: mined pairs; the share whose two sides come from
   two levels of the same article (a precision proxy: a pair across articles is a false paraphrase
   unless two articles happen to say the same thing — examples of both kinds are printed); whether
   the FRES orientation agrees with the levels; recall of the published gold sentence pairs of the
   three files (a gold pair is *covered* when a mined pair links sequences containing its two
   sentences, *exact* when the mined pair is exactly those two sentences), also over the gold pairs
   the miner may keep at all (not near-identical: MUSS drops pairs with a character Levenshtein
   distance under 20%); and the wall time of each stage with 1 worker (2 threads) and with 2
   worker processes (1 thread each; each loads the encoder before the clock starts).
2. **Scale** (``scale``): the same 114 OneStop documents hidden among a deterministic synthetic
   corpus (recombined clauses over wordfreq's top 3,000 English words, with *planted* rewrites of
   a sentence in another document; see :class:`Corpus`), ``--sequences`` sequences in all, or as
   many as the MiniLM rate measured on a sample encodes in ``--budget-minutes``; IVF+SQ8 above 50k
   sequences. Reported per stage: wall time, rates, index settings, peak memory; the OneStop
   precision proxy and gold recall among the distractors; planted recall; and the same embeddings
   indexed, searched and merged again with the other index type (exact vs IVF+SQ8: speed, the
   share of the exact miner's pairs IVF finds, an estimated crossover size).
3. **Projection to 10⁸ sequences** from the rates measured in 2 (cost model stated in the JSON).
4. **Filters** (``filters``): pivot BLEU/FRES pass rate, Sum4Simp keep rate and gain-classifier
   cut-off counts on the OneStop ADV→ELE gold pairs and the demo corpus, with the ASSET-derived
   gold pairs as the reference corpus.

The machine is shared: the 1-minute load average before and after each run is in the JSON.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from workers.engine.mining import CorpusDocument, CorpusPair, MiningConfig, MiningWork, run_local  # noqa: E402
from workers.engine.simplicity.muss_mining import contained, extract_sequences, near_identical  # noqa: E402

LEVELS = {"ADV": 0, "INT": 1, "ELE": 2}
FILES = ("ADV-ELE", "ADV-INT", "ELE-INT")
# MUSS A.1 with the MiniLM distance bound (SPEC §5.7); "any": no pair within one document
PARAMS = {"k": 8, "max_distance": 0.5, "max_relative": 0.6, "min_change": 0.2, "same_document": "any"}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def peak_mb() -> dict:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"this_process_mb": round(own, 1), "largest_child_mb": round(children, 1)}


def load() -> float:
    return round(os.getloadavg()[0], 2)


def run_job(documents, config: MiningConfig, workers: int, folder: Path) -> tuple[MiningWork, dict]:
    """Plan and run a job; wall seconds per stage (plan included) and the machine load around it."""
    before = load()
    t0 = time.perf_counter()
    work = MiningWork.create(folder, documents, config)
    plan_s = time.perf_counter() - t0
    seconds = run_local(work, workers=workers, progress=lambda f, m: log(f"  [{workers} worker(s)] {m}"))
    total = plan_s + sum(seconds.values())
    return work, {"workers": workers, "threads_per_worker": max(1, (os.cpu_count() or 1) // workers),
                  "wall_s": {"plan": round(plan_s, 2), **{k: round(v, 2) for k, v in seconds.items()},
                             "total": round(total, 2)},
                  "chunk_s_summed": {k: v["seconds"] for k, v in work.timings().items()},
                  "load_avg_1min_before_after": [before, load()]}


# --- 1. OneStopEnglish: three levels of 38 articles as unrelated documents ------------------------

def load_onestop(data_dir: Path, seed: int = 0):
    """Opaque-id documents, the hidden truth ``{doc id: (article, level)}`` and the gold pairs."""
    versions: dict[tuple[str, str], list[str]] = {}
    gold = []
    for name in FILES:
        for line in (data_dir / f"onestop_dev_{name}.jsonl").open(encoding="utf-8"):
            rec = json.loads(line)
            sides = {}
            for side in ("complex", "simple"):
                key = (rec["id"], rec[side]["level"])
                sents = [s for p in rec[side]["paragraphs"] for s in p]
                assert versions.setdefault(key, sents) == sents, key
                sides[side] = (key, sents)
            (c_key, c_sents), (s_key, s_sents) = sides["complex"], sides["simple"]
            for ci, si in rec.get("gold", []):
                gold.append({"article": rec["id"], "file": name, "complex": c_key, "simple": s_key, "ci": ci, "si": si,
                             "reachable": not (near_identical(c_sents[ci], s_sents[si], 0.2)
                                               or contained(c_sents[ci], s_sents[si]))})
    keys = sorted(versions)
    random.Random(seed).shuffle(keys)
    ids = {key: f"doc{n:03d}" for n, key in enumerate(keys)}
    documents = [CorpusDocument(ids[key], tuple(versions[key])) for key in keys]
    truth = {ids[key]: key for key in keys}
    for g in gold:
        g["complex_doc"], g["simple_doc"] = ids[g["complex"]], ids[g["simple"]]
    return documents, truth, gold


def onestop_quality(pairs: list[CorpusPair], truth: dict, gold: list[dict]) -> dict:
    n = len(pairs)
    same = [p for p in pairs if truth[p.complex.document][0] == truth[p.simple.document][0]]
    ordered = sum(LEVELS[truth[p.simple.document][1]] > LEVELS[truth[p.complex.document][1]] for p in same)
    by_levels: dict[str, int] = {}
    for p in same:
        a, b = sorted((truth[p.complex.document][1], truth[p.simple.document][1]), key=LEVELS.get)
        by_levels[f"{a}-{b}"] = by_levels.get(f"{a}-{b}", 0) + 1
    links: dict[tuple[str, str], list[tuple[set, set]]] = {}
    for p in pairs:
        links.setdefault((p.complex.document, p.simple.document), []).append((set(p.complex.sentences), set(p.simple.sentences)))
        links.setdefault((p.simple.document, p.complex.document), []).append((set(p.simple.sentences), set(p.complex.sentences)))

    def found(g: dict) -> tuple[bool, bool]:
        cands = links.get((g["complex_doc"], g["simple_doc"]), [])
        covered = any(g["ci"] in a and g["si"] in b for a, b in cands)
        exact = any(a == {g["ci"]} and b == {g["si"]} for a, b in cands)
        return covered, exact

    def recall(items: list[dict]) -> dict:
        hits = [found(g) for g in items]
        m = max(1, len(items))
        return {"gold_pairs": len(items), "covered": round(sum(h[0] for h in hits) / m, 4),
                "exact_1to1": round(sum(h[1] for h in hits) / m, 4)}

    reachable = [g for g in gold if g["reachable"]]
    return {
        "mined_pairs": n,
        "same_article_pairs": len(same),
        "same_article_share": round(len(same) / max(1, n), 4),
        "same_article_by_levels": dict(sorted(by_levels.items())),
        "fres_orientation_agrees_with_levels": round(ordered / max(1, len(same)), 4),
        "sentences_per_side_mean": round(float(np.mean([len(p.complex.sentences) + len(p.simple.sentences)
                                                         for p in pairs]) / 2), 2) if pairs else 0.0,
        "score_quantiles_10_50_90": np.quantile([p.score for p in pairs], [0.1, 0.5, 0.9]).round(3).tolist() if pairs else [],
        "gold_recall": {"all": recall(gold), "not_near_identical": recall(reachable),
                        **{name: recall([g for g in gold if g["file"] == name]) for name in FILES}},
        "near_identical_or_contained_gold_pairs": len(gold) - len(reachable),
        "examples_cross_article": [[p.complex.text, p.simple.text, round(p.score, 3)] for p in pairs
                                   if truth[p.complex.document][0] != truth[p.simple.document][0]][:6],
        "examples_same_article": [[p.complex.text, p.simple.text, round(p.score, 3)] for p in same[:: max(1, len(same) // 4)]][:4],
    }


def pair_keys(pairs: list[CorpusPair]) -> set:
    return {(p.complex.document, p.complex.sentences, p.simple.document, p.simple.sentences) for p in pairs}


def max_score_difference(a: list[CorpusPair], b: list[CorpusPair]) -> float:
    """Largest score change of a pair found by both (1 vs 2 threads: float sums in another order)."""
    scores = {(p.complex.document, p.complex.sentences, p.simple.document, p.simple.sentences): p.score for p in a}
    diffs = [abs(scores[k] - p.score) for p in b if (k := (p.complex.document, p.complex.sentences,
                                                           p.simple.document, p.simple.sentences)) in scores]
    return float(max(diffs, default=0.0))


def onestop_bench(data_dir: Path, folder: Path) -> dict:
    documents, truth, gold = load_onestop(data_dir)
    config = MiningConfig.from_dict({**PARAMS, "shard_size": 1024})
    runs, results = [], []
    for workers in (1, 2):
        log(f"onestop: mining {len(documents)} documents with {workers} worker(s)")
        work, timing = run_job(documents, config, workers, folder / f"onestop-{workers}")
        runs.append(timing)
        results.append(list(work.pairs()))
    pairs = results[0]
    quality = onestop_quality(pairs, truth, gold)
    log(f"onestop: {quality['mined_pairs']} pairs, same-article share {quality['same_article_share']}, "
        f"gold covered {quality['gold_recall']['all']['covered']}")
    plan = MiningWork(folder / "onestop-1").plan
    return {
        "corpus": {"documents": len(documents), "articles": len({a for a, _ in truth.values()}),
                   "sentences": plan["sentences"], "sequences_extracted": plan["sequences_extracted"],
                   "noisy_dropped": plan["noisy"], "sequences": plan["sequences"], "shards": plan["shards"],
                   "index": plan["index"], "ids": "opaque doc000… in shuffled order (articles and levels hidden)"},
        "params": {**PARAMS, "max_chars": 300, "max_punctuation": 0.1, "exclude_same_document_first": True},
        "stats": MiningWork(folder / "onestop-1").stats(),
        **quality,
        "same_pairs_with_1_and_2_workers": pair_keys(results[0]) == pair_keys(results[1]),
        "max_score_difference_1_vs_2_workers": max_score_difference(results[0], results[1]),
        "stages_by_workers": runs,
    }


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




# --- 2. scale: a synthetic corpus with planted rewrites ------------------------------------------

def measure_encode_rate(n: int = 1500) -> float:
    from workers.engine.encoders import get_encoder

    enc = get_encoder()
    docs, _ = Corpus(1).build(n)
    texts = [s.text for d, sents in docs.items() for s in extract_sequences(d, sents)][:n]
    enc.encode_uncached(texts[:64])  # warm-up
    t0 = time.perf_counter()
    enc.encode_uncached(texts)
    return len(texts) / (time.perf_counter() - t0)


def scale_bench(n_target: int, budget_s: float, workers: int, folder: Path, data_dir: Path) -> dict:
    """The OneStop documents (when present) among synthetic ones, up to the size that fits the budget."""
    from workers.engine.simplicity.readability import fres

    fres("Warm the syllable dictionary before the merge is timed.")
    rate = measure_encode_rate()
    # encoding is ~90% of the run: as many sequences as fit in the budget at the measured rate
    n = min(n_target, int(rate * budget_s * 0.85))
    log(f"scale: MiniLM {rate:.1f} sequences/s on a sample → {n} sequences (target {n_target})")
    real: list[CorpusDocument] = []
    truth: dict = {}
    gold: list[dict] = []
    if (data_dir / "onestop_dev_ADV-ELE.jsonl").exists():
        real, truth, gold = load_onestop(data_dir)
    n_real = sum(len(extract_sequences(d.id, d.sentences)) for d in real)
    t0 = time.perf_counter()
    docs, planted = Corpus(0).build(max(0, n - n_real))
    gen_s = time.perf_counter() - t0
    documents = [*real, *(CorpusDocument(f"syn-{k}", tuple(v)) for k, v in docs.items())]
    planted = [(f"syn-{a}", i, f"syn-{b}", j) for a, i, b, j in planted]
    config = MiningConfig.from_dict({**PARAMS, "shard_size": 8192})
    work, timing = run_job(documents, config, workers, folder / "scale")
    pairs = list(work.pairs())
    onestop = None
    if real:
        both_real = [p for p in pairs if p.complex.document in truth and p.simple.document in truth]
        quality = onestop_quality(both_real, truth, gold)
        onestop = {k: quality[k] for k in ("mined_pairs", "same_article_share", "gold_recall")}
        onestop["pairs_between_onestop_and_synthetic"] = sum(
            (p.complex.document in truth) != (p.simple.document in truth) for p in pairs)
    stats = work.stats()
    plan = work.plan
    searched = [work.chunk_info("search", s) for s in work.chunks("search")]
    faiss_s = sum(i["search_seconds"] for i in searched)
    filter_s = sum(i["seconds"] for i in searched) - faiss_s
    index_info = work.chunk_info("index")
    wall = timing["wall_s"]
    n_seq = plan["sequences"]
    return {
        "corpus": {"documents": len(documents), "onestop_documents": len(real), "onestop_sequences": n_real,
                   "sentences": plan["sentences"], "sequences": n_seq,
                   "sequences_extracted": plan["sequences_extracted"], "noisy_dropped": plan["noisy"],
                   "planted_pairs": len(planted), "generation_s": round(gen_s, 1), "shards": plan["shards"],
                   "target_sequences": n_target, "sized_by": f"{budget_s / 60:.0f} min budget at the sampled MiniLM rate"},
        "index": {"factory": plan["index"], "nlist": plan["nlist"], "nprobe": plan["nprobe"],
                  "dim": int(np.load(work.output("encode", 0), mmap_mode="r").shape[1]) if n_seq else 0,
                  "wall_s": index_info.get("seconds", 0.0), "train_s": index_info.get("train_seconds", 0.0),
                  "bytes": work.output("index").stat().st_size if work.output("index").exists() else 0},
        "stages": timing,
        "rates": {"encode_sequences_per_s_sample": round(rate, 1),
                  "encode_sequences_per_s": round(n_seq / max(wall["encode"], 1e-9), 1),
                  "search_queries_per_s": round(n_seq / max(faiss_s, 1e-9), 1),
                  "filter_candidates_per_s": round(stats["candidates"] / max(filter_s, 1e-9), 1),
                  "merge_pairs_per_s": round(len(pairs) / max(wall["merge"], 1e-9), 1),
                  "search_faiss_s": round(faiss_s, 2), "filters_s": round(filter_s, 2)},
        "stats": stats,
        "pairs": len(pairs),
        "onestop_among_synthetic": onestop,
        "planted_recall": planted_recall_corpus(pairs, planted),
        "peak_rss": peak_mb(),
        "exact_vs_ivf": compare_index(work, folder / "scale-other-index"),
    }


def compare_index(work: MiningWork, folder: Path) -> dict:
    """Index, search and merge the same embeddings again with the other index type (IVF+SQ8 if
    the job was exact, exact if it was IVF): search speed of each, the share of the exact miner's
    pairs the IVF one finds, and the corpus size from which IVF (training included) is faster."""
    exact_job = work.plan["nlist"] is None
    alt = MiningWork.create(folder, work.documents,
                            MiningConfig.from_dict({**work.config.to_dict(), "exact_limit": 1 if exact_job else 10**12}))
    for shard in work.chunks("encode"):
        target = alt.output("encode", shard)
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            os.link(work.output("encode", shard), target)
    seconds = run_local(alt)

    def faiss_s(job: MiningWork) -> float:
        return sum(job.chunk_info("search", s)["search_seconds"] for s in job.chunks("search"))

    def keys(job: MiningWork) -> set:
        return {frozenset({(p.complex.document, p.complex.sentences), (p.simple.document, p.simple.sentences)})
                for p in job.pairs()}

    exact, ivf = (work, alt) if exact_job else (alt, work)
    n = work.n_sequences
    exact_pairs, ivf_pairs = keys(exact), keys(ivf)
    # whole-corpus cost at N = x·n: exact build + search ∝ x² (N queries × N vectors); IVF training
    # ∝ x (256·nlist samples × nlist centroids, nlist ∝ √N), adding + searching ∝ x^1.5
    e_total = exact.chunk_info("index")["seconds"] + faiss_s(exact)
    i_train = ivf.chunk_info("index").get("train_seconds", 0.0)
    i_rest = ivf.chunk_info("index")["seconds"] - i_train + faiss_s(ivf)
    lo, hi = 1e-6, 1e3
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if e_total * mid * mid < i_train * mid + i_rest * mid**1.5 else (lo, mid)
    return {
        "sequences": n, "exact_index": exact.plan["index"], "ivf_index": ivf.plan["index"], "nprobe": ivf.plan["nprobe"],
        "search_faiss_s": {"exact": round(faiss_s(exact), 2), "ivf": round(faiss_s(ivf), 2)},
        "index_build_s": {"exact": round(exact.chunk_info("index")["seconds"], 2),
                          "ivf": round(ivf.chunk_info("index")["seconds"], 2)},
        "alt_stage_wall_s": seconds,
        "ivf": {"factory": ivf.plan["index"], "nlist": ivf.plan["nlist"], "nprobe": ivf.plan["nprobe"],
                "train_s": ivf.chunk_info("index").get("train_seconds", 0.0),
                "build_s": ivf.chunk_info("index")["seconds"],
                "search_queries_per_s": round(n / max(faiss_s(ivf), 1e-9), 1)},
        "pairs": {"exact": len(exact_pairs), "ivf": len(ivf_pairs), "both": len(exact_pairs & ivf_pairs)},
        "ivf_recall_of_exact_pairs": round(len(exact_pairs & ivf_pairs) / max(1, len(exact_pairs)), 4),
        "estimated_crossover_sequences": int(lo * n),
        "crossover_model": "exact ∝ N², IVF training ∝ N, IVF add + search ∝ N^1.5 (fitted at this N)",
    }


def planted_recall_corpus(pairs: list[CorpusPair], planted) -> dict:
    """Share of planted sentence pairs mined exactly, and covered by a mined sequence pair."""
    links: dict[tuple[str, str], list[tuple[set, set]]] = {}
    for p in pairs:
        a, b = p.complex, p.simple
        links.setdefault((a.document, b.document), []).append((set(a.sentences), set(b.sentences)))
        links.setdefault((b.document, a.document), []).append((set(b.sentences), set(a.sentences)))
    exact = covered = 0
    for da, ia, db, ib in planted:
        cands = links.get((da, db), [])
        covered += any(ia in x and ib in y for x, y in cands)
        exact += any(x == {ia} and y == {ib} for x, y in cands)
    n = max(1, len(planted))
    return {"planted": len(planted), "exact_sentence_pair": round(exact / n, 4), "covered": round(covered / n, 4),
            "note": "a planted rewrite swaps content words for random frequent words: often no longer a paraphrase "
                    "a semantic encoder ranks first, so this is a sanity check, not a recall estimate"}


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




# --- 3. projection ------------------------------------------------------------------------------

def projection(scale: dict, n_target: float = 1e8) -> dict:
    """Hours for ``n_target`` sequences from the rates measured at the scale run's size N."""
    n = scale["corpus"]["sequences"]
    rates = scale["rates"]
    ivf = scale["exact_vs_ivf"]["ivf"]  # the IVF+SQ8 job on the same embeddings (the main job's or the comparison's)
    nlist_here = ivf["nlist"]
    nprobe = ivf["nprobe"] or 16
    nlist = int(4 * math.sqrt(n_target))
    dim = scale["index"]["dim"]

    def per_query(n_: float, nlist_: float) -> float:  # vectors compared per query: coarse + scanned lists
        return nlist_ + nprobe * n_ / nlist_

    search_rate = ivf["search_queries_per_s"] * per_query(n, nlist_here) / per_query(n_target, nlist)
    train_s = ivf["train_s"] * (nlist / nlist_here) ** 2  # sample = 256·nlist, k-means ∝ sample × nlist
    add_s = max(0.0, ivf["build_s"] - ivf["train_s"]) * (n_target * nlist) / (n * nlist_here)
    per_seq_candidates = scale["stats"]["candidates"] / n
    per_seq_pairs = scale["pairs"] / n
    hours = {
        "encode": n_target / rates["encode_sequences_per_s"] / 3600,
        "index_train": train_s / 3600,
        "index_add": add_s / 3600,
        "search": n_target / search_rate / 3600,
        "filters": n_target * per_seq_candidates / rates["filter_candidates_per_s"] / 3600,
        "merge": n_target * per_seq_pairs / max(rates["merge_pairs_per_s"], 1e-9) / 3600,
    }
    sharded = ("encode", "search", "filters")

    def wall(workers: int) -> float:
        return sum(h / workers if k in sharded else h for k, h in hours.items())

    return {
        "sequences": n_target,
        "measured_at": {"sequences": n, "index": ivf["factory"], "machine": "this 2-core CPU (shared), 1 worker"},
        "cost_model": {
            "encode": "linear in sequences (measured MiniLM CPU rate)",
            "index": f"IVF{nlist},SQ8 (nlist = 4·√N): k-means on a 256·nlist sample ∝ nlist², adding ∝ N·nlist",
            "search": f"per query ∝ nlist + nprobe·N/nlist vectors compared (nprobe {nprobe}): "
                      f"{search_rate:.1f} queries/s at 10⁸ vs {ivf['search_queries_per_s']:.1f} measured with {ivf['factory']}",
            "filters": f"{per_seq_candidates:.2f} candidates per sequence at the measured rate",
            "merge": f"{per_seq_pairs:.4f} pairs per sequence at the measured rate (one process)",
        },
        "cpu_hours_one_worker": {k: round(v, 1) for k, v in hours.items()},
        "total_cpu_hours_one_worker": round(sum(hours.values()), 1),
        "wall_hours_with_workers": {w: round(wall(w), 1) for w in (8, 64, 512)},
        "note": "encode, search and filters are sharded chunks (linear in workers); index and merge are one chunk each. "
                "No GPU here: GPU encoding (faiss-gpu, fp16 MiniLM) was not measured, so it is not projected.",
        "storage": {"vectors_float32_gb": round(n_target * dim * 4 / 1e9, 1),
                    "index_sq8_gb": round(n_target * (dim + 8) / 1e9, 1),
                    "note": "one IVF+SQ8 index of 10⁸ vectors needs ~40 GB RAM in the index and search workers; "
                            "PQ (e.g. 48 B/vector) or index shards would cut that"},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "bench")
    ap.add_argument("--sequences", type=int, default=200_000, help="scale run target (capped by the budget)")
    ap.add_argument("--budget-minutes", type=float, default=30.0, help="time the scale run may take")
    ap.add_argument("--scale-workers", type=int, default=1)
    ap.add_argument("--skip-onestop", action="store_true")
    ap.add_argument("--skip-scale", action="store_true")
    ap.add_argument("--skip-filters", action="store_true")
    ap.add_argument("--workdir", type=Path, default=None, help="keep the job folders here (default: a temporary folder)")
    args = ap.parse_args()
    import faiss
    import torch

    started = time.perf_counter()
    result: dict = {"machine": {"cpu_cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
                                "faiss": faiss.__version__, "encoder": "bundled all-MiniLM-L6-v2 (cpu)",
                                "load_avg_1min_at_start": load()}}
    with tempfile.TemporaryDirectory(prefix="mining-bench-") as tmp:
        folder = args.workdir or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        if not args.skip_onestop:
            if (args.data_dir / "onestop_dev_ADV-ELE.jsonl").exists():
                result["onestop"] = onestop_bench(args.data_dir, folder)
            else:
                result["onestop"] = {"skipped": f"no OneStop data under {args.data_dir}"}
        if not args.skip_scale:
            result["scale"] = scale_bench(args.sequences, args.budget_minutes * 60, args.scale_workers, folder,
                                          args.data_dir)
            result["projection_1e8"] = projection(result["scale"])
    if not args.skip_filters:
        result["filters"] = filter_bench(args.data_dir)
    result["total_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
