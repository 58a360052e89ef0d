"""Export benchmark (not a test): time and peak memory of an auto export of 100k and 1M candidate pairs
from PostgreSQL, to show that memory stays flat as the corpus grows (SPEC §7, issue item 8).

    DATABASE_URL=postgres://alignapp:alignapp-ci@127.0.0.1:5432/alignapp_export_bench \\
        .venv/bin/python bench/export_bench.py [--sizes 100000 1000000] [--formats tsv,parallel,jsonl,articles,hf]

The database named in DATABASE_URL is created if missing and migrated. For each size a project
``bench-<size>`` is filled once with COPY (articles of two levels, 60 complex and 50 simple
sentences, 100 candidate pairs per article from one succeeded run of a model version, with three
stored attributes each; sentence membership rows are not generated: exports read the pairs' index
keys). Each export then runs in a fresh child process so its peak RSS (``ru_maxrss``) is its own.
Prints one JSON object on stdout (progress on stderr).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "alignapp.settings")

PAIRS_PER_ARTICLE = 100
COMPLEX_SENTENCES = 60
SIMPLE_SENTENCES = 50
WORDS = ("the city council voted on tuesday to approve a new budget which includes funding for schools roads "
         "parks and libraries scientists say bees communicate where flowers are by dancing in the hive while "
         "owls hunt at night and hear very well people live in many places around world").split()


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def ensure_database() -> None:
    import dj_database_url
    import psycopg

    cfg = dj_database_url.parse(os.environ["DATABASE_URL"])
    if "postgresql" not in cfg["ENGINE"]:
        sys.exit("export_bench needs DATABASE_URL=postgres://...")
    with psycopg.connect(host=cfg["HOST"], port=cfg["PORT"] or 5432, user=cfg["USER"], password=cfg["PASSWORD"],
                         dbname="postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [cfg["NAME"]]).fetchone():
            conn.execute(f'CREATE DATABASE "{cfg["NAME"]}"')


def setup_django() -> None:
    import django

    django.setup()


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 22))).capitalize() + "."


def fill(size: int) -> int:
    """The id of project ``bench-<size>``, generating its corpus with COPY when it does not exist yet."""
    from django.db import connection, transaction

    from annotation.models import AlignmentRun, LabelScheme, ModelVersion, Project, Status

    name = f"bench-{size}"
    existing = Project.objects.filter(name=name).first()
    if existing is not None and existing.runs.exists():
        return existing.pk
    started = time.monotonic()
    rng = random.Random(size)
    scheme = LabelScheme.objects.get(slug="aligned-partial-not")
    with transaction.atomic():
        project = Project.objects.create(name=name, label_scheme=scheme)
        mv = ModelVersion.objects.create(project=project, name="bench-crf", kind="crf", path="/models/bench-crf")
        run = AlignmentRun.objects.create(project=project, method="crf", model_version=mv, status=Status.SUCCEEDED)
        articles = size // PAIRS_PER_ARTICLE
        with connection.cursor() as cur:
            def next_id(table: str) -> int:
                cur.execute(f"SELECT COALESCE(MAX(id), 0) + 1 FROM {table}")
                return cur.fetchone()[0]

            a0, d0, p0, s0, c0 = (next_id(t) for t in ("annotation_article", "annotation_document", "annotation_paragraph",
                                                      "annotation_sentence", "annotation_candidatepair"))
            now = "2026-01-01 00:00:00+00"
            with cur.copy("COPY annotation_article (id, project_id, title, source, meta, created_at) FROM STDIN") as copy:
                for a in range(articles):
                    copy.write_row((a0 + a, project.pk, f"article-{a:07d}", f"source-{a % 3}", "{}", now))
            with cur.copy("COPY annotation_document (id, article_id, level, rank, meta) FROM STDIN") as copy:
                for a in range(articles):
                    copy.write_row((d0 + 2 * a, a0 + a, "0", 0, "{}"))
                    copy.write_row((d0 + 2 * a + 1, a0 + a, "1", 1, "{}"))
            log(f"{name}: {articles} articles, documents written")
            paragraphs = sentences = 0
            with cur.copy("COPY annotation_paragraph (id, document_id, index) FROM STDIN") as pcopy:
                for a in range(articles):
                    for k, n in ((0, COMPLEX_SENTENCES), (1, SIMPLE_SENTENCES)):
                        for p in range(n // 10):
                            pcopy.write_row((p0 + paragraphs, d0 + 2 * a + k, p))
                            paragraphs += 1
            with cur.copy("COPY annotation_sentence (id, document_id, paragraph_id, index, text) FROM STDIN") as scopy:
                paragraph = p0
                for a in range(articles):
                    for k, n in ((0, COMPLEX_SENTENCES), (1, SIMPLE_SENTENCES)):
                        for i in range(n):
                            scopy.write_row((s0 + sentences, d0 + 2 * a + k, paragraph + i // 10, i, sentence(rng)))
                            sentences += 1
                        paragraph += n // 10
            log(f"{name}: {sentences} sentences written ({time.monotonic() - started:.0f} s)")
            with cur.copy("COPY annotation_candidatepair (id, article_id, complex_document_id, simple_document_id, "
                          "complex_key, simple_key, score, predicted_label, features, origin, identical, created_at) "
                          "FROM STDIN") as copy:
                n = 0
                for a in range(articles):
                    for j in range(PAIRS_PER_ARTICLE):
                        score = rng.random()
                        features = json.dumps({"access_char_ratio": round(rng.uniform(0.4, 1.2), 3),
                                               "sum4simp_T": round(rng.random(), 3), "gain_prob": round(rng.random(), 3)})
                        copy.write_row((c0 + n, a0 + a, d0 + 2 * a, d0 + 2 * a + 1, str(j % COMPLEX_SENTENCES),
                                        str(j % SIMPLE_SENTENCES), score, "aligned" if score > 0.2 else "partial",
                                        features, "model", False, now))
                        n += 1
            # the run's predictions of those pairs (one per pair)
            cur.execute("INSERT INTO annotation_prediction (run_id, pair_id, score, predicted_label, features, created_at) "
                        "SELECT %s, id, score, predicted_label, '{}', created_at FROM annotation_candidatepair "
                        "WHERE id >= %s AND id < %s", [run.pk, c0, c0 + n])
            for table in ("article", "document", "paragraph", "sentence", "candidatepair"):
                cur.execute(f"SELECT setval(pg_get_serial_sequence('annotation_{table}', 'id'), "
                            f"(SELECT MAX(id) FROM annotation_{table}))")
            AlignmentRun.objects.filter(pk=run.pk).update(pair_count=n, articles_total=articles, articles_done=articles)
        with connection.cursor() as cur:
            cur.execute("ANALYZE")
    log(f"{name}: {n} candidate pairs generated in {time.monotonic() - started:.0f} s")
    return project.pk


def export_once(project_id: int, formats: str) -> dict:
    """Run in a child process: one auto export; its time, peak RSS and output size."""
    from django.db import connection

    from annotation.models import ModelVersion, Project, Split
    from annotation.services import export

    project = Project.objects.get(pk=project_id)
    Split.objects.filter(article__project=project).update(locked=False)
    mv = ModelVersion.objects.get(project=project)
    options = export.ExportOptions.parse({"kind": "auto", "model_version": mv.pk, "formats": formats.split(","),
                               "split_policy": {"mode": "ratio", "train": 0.8, "dev": 0.1, "test": 0.1, "seed": 1}})
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    done = export.run_export(project, options)
    seconds = time.monotonic() - started
    root = export.export_dir(done)
    files = [p for p in root.rglob("*") if p.is_file()]
    result = {
        "candidate_pairs": project.runs.get().pair_count,
        "exported_pairs": done.pair_count,
        "articles": sum(c["articles"] for c in done.manifest["counts"]["splits"].values()),
        "seconds": round(seconds, 2),
        "write_s": done.manifest["timings"].get("write_s"),
        "zip_s": done.manifest["timings"].get("zip_s"),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "rss_before_export_mb": round(rss_before / 1024, 1),
        "output_mb": round(sum(p.stat().st_size for p in files) / 2**20, 1),
        "formats": formats.split(","),
        "database": connection.vendor,
    }
    import shutil

    shutil.rmtree(root, ignore_errors=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=[100_000, 1_000_000])
    parser.add_argument("--formats", default="tsv,parallel,jsonl,articles,hf")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        setup_django()
        print(json.dumps(export_once(args.child, args.formats)))
        return
    if "DATABASE_URL" not in os.environ:
        sys.exit("set DATABASE_URL=postgres://... (a database of its own; it is created if missing)")
    ensure_database()
    setup_django()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    results = []
    for size in args.sizes:
        project_id = fill(size)
        from django.db import connection

        connection.close()
        log(f"exporting {size} pairs in a child process ...")
        out = subprocess.run([sys.executable, __file__, "--child", str(project_id), "--formats", args.formats],
                             capture_output=True, text=True, check=True)
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
        log(json.dumps(results[-1]))
    summary = {"benchmark": "export", "machine": {"cpus": os.cpu_count()}, "results": results}
    if len(results) >= 2:
        small, large = results[0], results[-1]
        summary["memory_growth"] = round(large["peak_rss_mb"] / small["peak_rss_mb"], 2)
        summary["pairs_growth"] = round(large["exported_pairs"] / max(1, small["exported_pairs"]), 1)
        summary["pairs_per_second_largest"] = round(large["exported_pairs"] / large["seconds"])
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
