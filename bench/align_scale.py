"""One alignment run on many Celery workers (issue 20): throughput per stage with 1 and 2 workers.

Prints one JSON summary on stdout (progress on stderr)::

    python bench/align_scale.py [--pairs 2000] [--method crf] [--workers 1,2]
        [--database-url postgres://…/alignapp_bench_scale] [--broker redis://127.0.0.1:6379/13]

* **Corpus** — ``--pairs`` article pairs: the shared OneStop dev pairs (``--data-dir``) hidden at
  random places among generated pairs of realistic length (complex sides of 20–45 sentences in
  paragraphs of 2–6, built from OneStop sentences made distinct by two swapped words; simple sides shortened, split, merged, dropped
  and reordered in places), imported through the app's JSONL importer into a fresh project.
* **Runs** — for each worker count, a fresh run of ``--method`` on a **cold** embedding cache, with
  that many ``celery worker`` processes (``--pool threads --concurrency 1``, ``OMP_NUM_THREADS=1``:
  one thread each, a fair comparison on 2 cores) over the same database and broker; then one more
  run with the largest count on the **warm** cache (the re-run: cache hit rate).
* **Figures** — article pairs/s (wall, run created → finished), sentences encoded/s (encoder
  seconds), CRF decodes/s (document pairs decoded per second of align time less encoding), rows written/s
  (candidate pairs + predictions + sentence rows per second of write time), per-stage seconds
  summed over chunks and the wall time, peak RSS per worker (``VmHWM``), and a projection to
  Wiki-Auto (138,095 article pairs) for 1, 8 and 64 CPU workers from the measured per-worker rate
  and the measured 2-worker scaling efficiency (and a database-bound ceiling from the write rate).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
WIKI_AUTO = 138_095


def log(msg: str) -> None:
    print(f"[align_scale] {msg}", file=sys.stderr, flush=True)


def setup_django(database_url: str, broker: str, var: Path) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ["CELERY_BROKER_URL"] = broker
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "alignapp.settings")
    os.environ["CELERY_BROKER_DIR"] = str(var / "broker")
    if database_url.startswith("postgres"):
        import psycopg

        base, name = database_url.rsplit("/", 1)
        with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


# --- the corpus ----------------------------------------------------------------------------------

def onestop(data_dir: Path) -> list[dict]:
    out = []
    for path in sorted(data_dir.glob("onestop_dev_*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                record["id"] = f"onestop-{path.stem}-{record['id']}"
                record.pop("gold", None)
                out.append(record)
    return out


def distinct_sentence(pool: list[str], vocab: list[str], seen: set[str], rng: random.Random) -> str:
    """A pool sentence with two of its words swapped for other corpus words, drawn again until it
    is new: without this, 2,000 articles built from a few thousand OneStop sentences would hit the
    embedding cache inside the cold run and overstate the encoder's throughput."""
    while True:
        words = rng.choice(pool).split()
        for _ in range(2):
            words[rng.randrange(1, len(words))] = rng.choice(vocab)
        sentence = " ".join(words)
        if sentence not in seen:
            seen.add(sentence)
            return sentence


def generated(n: int, pool: list[str], rng: random.Random) -> list[dict]:
    records = []
    vocab = sorted({w for s in pool for w in s.split() if w.isalpha() and w.islower()})
    seen = set(pool)
    for k in range(n):
        complex_side = [distinct_sentence(pool, vocab, seen, rng) for _ in range(rng.randint(20, 45))]
        simple_side: list[str] = []
        for s in complex_side:
            roll = rng.random()
            words = s.split()
            if roll < 0.15:
                continue  # dropped
            if roll < 0.45:
                simple_side.append(" ".join(words[: max(4, len(words) * 2 // 3)]).rstrip(",;") + ".")  # shortened
            elif roll < 0.55 and len(words) > 12:
                half = len(words) // 2
                simple_side += [" ".join(words[:half]) + ".", " ".join(words[half:]).capitalize()]  # split
            else:
                simple_side.append(s)
        if len(simple_side) > 4:
            i = rng.randrange(len(simple_side) - 3)
            simple_side[i:i + 3] = rng.sample(simple_side[i:i + 3], 3)  # reordered in places

        def paragraphs(sents: list[str]) -> list[list[str]]:
            out, i = [], 0
            while i < len(sents):
                size = rng.randint(2, 6)
                out.append(sents[i:i + size])
                i += size
            return out

        records.append({"id": f"generated-{k:06d}", "complex": {"level": "ADV", "paragraphs": paragraphs(complex_side)},
                        "simple": {"level": "ELE", "paragraphs": paragraphs(simple_side or complex_side[:1])}})
    return records


def build_corpus(n_pairs: int, data_dir: Path, seed: int = 0):
    from annotation.models import LabelScheme, Project
    from annotation.services.corpus.importing import import_files

    rng = random.Random(seed)
    real = onestop(data_dir)
    pool = [s for r in real for side in ("complex", "simple") for p in r[side]["paragraphs"] for s in p if len(s.split()) >= 5]
    hidden = real[: min(len(real), n_pairs)]
    records = generated(n_pairs - len(hidden), pool, rng)
    for r in hidden:
        records.insert(rng.randrange(len(records) + 1), r)
    project = Project.objects.create(name=f"align-scale-{int(time.time())}", language="en",
                                     label_scheme=LabelScheme.objects.get(slug="aligned-partial-not"))
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    t0 = time.monotonic()
    import_files(project, [("scale.jsonl", data)], "jsonl")
    sentences = sum(len(s) for r in records for side in ("complex", "simple") for s in r[side]["paragraphs"])
    log(f"corpus: {len(records)} article pairs ({len(hidden)} OneStop), {sentences} sentences, imported in "
        f"{time.monotonic() - t0:.1f} s")
    return project, {"article_pairs": len(records), "onestop_pairs_hidden": len(hidden), "sentences": sentences}


# --- workers and runs -------------------------------------------------------------------------------

def start_workers(n: int, env: dict, folder: Path) -> list[tuple[subprocess.Popen, Path]]:
    workers = []
    for i in range(n):
        log_file = folder / f"worker-{i}.log"
        cmd = [sys.executable, "-m", "celery", "-A", "alignapp", "worker", "-Q", "cpu,gpu", "--pool", "threads",
               "--concurrency", "1", "--without-gossip", "--without-mingle", "--without-heartbeat", "--loglevel", "INFO",
               "-n", f"scale{i}@%h"]
        out = open(log_file, "ab")  # noqa: SIM115 - closed with the process
        workers.append((subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=str(ROOT), start_new_session=True,
                                         env={**os.environ, **env}), log_file))
    deadline = time.monotonic() + 180
    for process, log_file in workers:
        while "ready." not in log_file.read_text(errors="replace"):
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"worker did not start:\n{log_file.read_text(errors='replace')[-3000:]}")
            time.sleep(0.3)
    return workers


def peak_rss_mb(pid: int) -> float | None:
    try:
        match = re.search(r"VmHWM:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    except OSError:
        return None
    return round(int(match.group(1)) / 1024, 1) if match else None


def stop(workers) -> None:
    import signal

    for process, _ in workers:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process, _ in workers:
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def one_run(project, method: str, n_workers: int, cache_dir: Path, folder: Path, env: dict, timeout: float) -> dict:
    from django.db import connection

    from annotation.models import PairSentence, Prediction, RunChunk
    from annotation.services.alignment.alignment_runs import start_run

    env = {**env, "EMBEDDING_CACHE_DIR": str(cache_dir)}
    workers = start_workers(n_workers, env, folder)
    try:
        t0 = time.monotonic()
        run = start_run(project, method, params={"access_attributes": False}, queue="gpu")
        while True:
            run.refresh_from_db()
            if run.is_finished:
                break
            if time.monotonic() - t0 > timeout:
                raise SystemExit(f"run #{run.pk} did not finish in {timeout} s ({run.message})")
            time.sleep(0.5)
        wall = time.monotonic() - t0
        rss = [peak_rss_mb(p.pid) for p, _ in workers]
    finally:
        stop(workers)
    connection.close()
    if run.status != "succeeded":
        raise SystemExit(f"run #{run.pk} {run.status}: {run.error}")
    stats = [c or {} for c in RunChunk.objects.filter(run=run).values_list("stats", flat=True)]
    stage = {k: round(sum((s.get("seconds") or {}).get(k, 0.0) for s in stats), 3)
             for k in ("load_model_s", "load_s", "align_s", "encode_s", "write_s")}
    encoded = sum(s.get("encoded", 0) for s in stats)
    requested = sum(s.get("requested", 0) for s in stats)
    decodes = sum(s.get("decodes", 0) for s in stats)
    # every upserted candidate pair and prediction, and the pairs' sentence rows (inserted, or skipped as present)
    rows = 2 * Prediction.objects.filter(run=run).count() + PairSentence.objects.filter(pair__predictions__run=run).count()
    doc_pairs = run.result["document_pairs"]
    return {
        "run": run.pk, "workers": n_workers, "threads_per_worker": 1, "wall_s": round(wall, 2),
        "article_pairs": doc_pairs, "pairs_written": run.pair_count, "chunks": run.result["chunks"]["total"],
        "chunks_by_worker": run.result["chunks"]["workers"],
        "article_pairs_per_s": round(doc_pairs / wall, 3),
        "sentences_encoded_per_s": round(encoded / stage["encode_s"], 1) if stage["encode_s"] else None,
        "crf_decodes_per_s": round(decodes / (stage["align_s"] - stage["encode_s"]), 2)
        if stage["align_s"] > stage["encode_s"] else None,  # document pairs decoded per second of non-encoder align time
        "rows_written": rows, "rows_written_per_s": round(rows / stage["write_s"], 1) if stage["write_s"] else None,
        "stage_seconds_summed_over_chunks": stage,
        "peak_rss_mb_per_worker": rss,
        "embedding_cache": {"requested": requested, "encoded": encoded,
                            "hit_rate": round(1 - encoded / requested, 4) if requested else None},
    }


def projection(runs: dict) -> dict:
    one = runs.get("1")
    if not one:
        return {}
    per_worker = one["article_pairs_per_s"]
    two = runs.get("2")
    efficiency = min(1.0, two["article_pairs_per_s"] / (2 * per_worker)) if two else 1.0
    write_per_pair = one["stage_seconds_summed_over_chunks"]["write_s"] / max(1, one["article_pairs"])
    db_ceiling = 1 / write_per_pair if write_per_pair else None  # if the database wrote one chunk at a time
    out = {"wiki_auto_article_pairs": WIKI_AUTO, "per_worker_article_pairs_per_s": per_worker,
           "two_worker_scaling_efficiency": round(efficiency, 3),
           "database_bound_article_pairs_per_s": round(db_ceiling, 1) if db_ceiling else None, "cpu_workers": {}}
    for n in (1, 8, 64):
        rate = per_worker * (1 if n == 1 else n * efficiency)
        if db_ceiling:
            rate = min(rate, db_ceiling)
        out["cpu_workers"][str(n)] = {"article_pairs_per_s": round(rate, 2), "hours": round(WIKI_AUTO / rate / 3600, 2)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--method", default="crf")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "bench")
    parser.add_argument("--database-url", default="postgres://alignapp:alignapp-ci@127.0.0.1:5432/alignapp_bench_scale")
    parser.add_argument("--broker", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--chunk-sentences", type=int, default=2000)
    parser.add_argument("--timeout", type=float, default=6 * 3600)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="align-scale-"))
    env = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TORCH_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false",
           "RUN_CHUNK_SENTENCES": str(args.chunk_sentences), "DATABASE_URL": args.database_url,
           "CELERY_BROKER_URL": args.broker, "CELERY_BROKER_DIR": str(folder / "broker"), "HF_HUB_OFFLINE": "1"}
    os.environ.update({k: v for k, v in env.items() if k.endswith("_THREADS")})
    setup_django(args.database_url, args.broker, folder)
    if args.broker.startswith("redis"):
        import redis

        redis.Redis.from_url(args.broker).flushdb()
    project, corpus = build_corpus(args.pairs, args.data_dir)
    runs: dict[str, dict] = {}
    counts = [int(n) for n in args.workers.split(",")]
    for n in counts:
        log(f"{args.method}: {n} worker(s), cold embedding cache")
        runs[str(n)] = one_run(project, args.method, n, folder / f"cache-{n}", folder, env, args.timeout)
        log(json.dumps(runs[str(n)]))
    n = max(counts)
    log(f"{args.method}: re-run with {n} worker(s) on the warm embedding cache")
    rerun = one_run(project, args.method, n, folder / f"cache-{n}", folder, env, args.timeout)
    print(json.dumps({"method": args.method, "corpus": corpus, "database": args.database_url.split("@")[-1],
                      "broker": args.broker.split("@")[-1], "chunk_sentences": args.chunk_sentences,
                      "runs_by_workers": runs, "rerun_warm_cache": rerun,
                      "cache_hit_rate_on_rerun": rerun["embedding_cache"]["hit_rate"],
                      "projection": projection(runs), "cpu_count": os.cpu_count()}, indent=2))


if __name__ == "__main__":
    main()
