"""How long the pair-identity migration (0004 → 0006) takes on a large database (not a test).

Builds the *old* shape in a fresh database — every run with its own copy of each sentence pair,
annotators' labels, assignments and gold on the copies — then times ``migrate`` to the new shape
and checks that no label was lost (labels after + label history == labels before). Prints JSON.

    .venv/bin/python bench/migration_bench.py [--articles 500] [--sentences 40] [--runs 3]
    BENCH_DATABASE_URL=postgres://alignapp:alignapp-ci@127.0.0.1:5432/alignapp_migration \\
        .venv/bin/python bench/migration_bench.py

Without BENCH_DATABASE_URL a temporary SQLite file is used. A PostgreSQL database named in the URL
is created when missing and dropped at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BEFORE = [("annotation", "0004_sentence_pairs_and_history")]
AFTER = [("annotation", "0006_pair_identity")]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=500)
    parser.add_argument("--sentences", type=int, default=40, help="sentences per document (and pairs per run)")
    parser.add_argument("--runs", type=int, default=3, help="runs, each with its own copy of every pair")
    parser.add_argument("--annotators", type=int, default=3)
    parser.add_argument("--label-share", type=float, default=0.3, help="share of copies each annotator labelled")
    return parser.parse_args()


def setup_database() -> tuple[str, callable]:
    url = os.environ.get("BENCH_DATABASE_URL")
    if not url:
        path = Path(tempfile.mkdtemp()) / "migration-bench.sqlite3"
        os.environ["DATABASE_URL"] = f"sqlite:///{path}"
        return "sqlite", lambda: path.unlink(missing_ok=True)
    from urllib.parse import urlparse, urlunparse

    import psycopg

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    admin = urlunparse(parsed._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    os.environ["DATABASE_URL"] = url

    def drop() -> None:
        from django.db import connections

        connections.close_all()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')

    return "postgresql", drop


def migrate(targets):
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def build_old_shape(apps, args) -> dict[str, int]:
    """The old shape: ``runs`` copies of every 1:1 pair, labels/assignments/gold on random copies."""
    rng = random.Random(7)
    m = {name: apps.get_model("annotation", name) for name in (
        "LabelScheme", "Project", "Article", "Document", "Paragraph", "Sentence", "AlignmentRun", "CandidatePair",
        "PairSentence", "Label", "Assignment", "Adjudication")}
    User = apps.get_model("auth", "User")
    scheme, _ = m["LabelScheme"].objects.get_or_create(slug="bench", defaults={"name": "b", "kind": "categorical", "values": []})
    project = m["Project"].objects.create(name="Migration bench", label_scheme=scheme)
    users = [User.objects.create(username=f"migration-bench-{i}") for i in range(args.annotators)]
    runs = [m["AlignmentRun"].objects.create(project=project, method="crf", status="succeeded") for _ in range(args.runs)]
    articles = m["Article"].objects.bulk_create([m["Article"](project=project, title=f"A{i}") for i in range(args.articles)])
    docs = m["Document"].objects.bulk_create([m["Document"](article=a, level=lv, rank=r)
                                              for a in articles for r, lv in enumerate(("adv", "ele"))])
    paragraphs = m["Paragraph"].objects.bulk_create([m["Paragraph"](document=d, index=0) for d in docs])
    sentences = m["Sentence"].objects.bulk_create(
        [m["Sentence"](document=d, paragraph=p, index=i, text=f"Sentence {i} of document {d.pk} about topic {i % 7}.")
         for d, p in zip(docs, paragraphs) for i in range(args.sentences)], batch_size=5000)
    sid = {(s.document_id, s.index): s.pk for s in sentences}
    counts = {"pair_rows": 0, "labels": 0}
    for a in range(args.articles):
        c_doc, s_doc = docs[2 * a], docs[2 * a + 1]
        pairs = m["CandidatePair"].objects.bulk_create(
            [m["CandidatePair"](run=run, article=articles[a], complex_document=c_doc, simple_document=s_doc,
                                complex_key=str(i), simple_key=str(i), score=rng.random(), predicted_label="aligned",
                                origin="model") for run in runs for i in range(args.sentences)])
        m["PairSentence"].objects.bulk_create(
            [m["PairSentence"](pair=p, sentence_id=sid[(c_doc.pk, int(p.complex_key))], side="complex") for p in pairs]
            + [m["PairSentence"](pair=p, sentence_id=sid[(s_doc.pk, int(p.simple_key))], side="simple") for p in pairs])
        labels, assignments, gold = [], [], []
        for user in users:
            for p in pairs:
                if rng.random() < args.label_share:
                    labels.append(m["Label"](pair=p, annotator=user, value=rng.choice(["aligned", "partial"]), seconds=11))
                    assignments.append(m["Assignment"](pair=p, annotator=user, status="done"))
        gold += [m["Adjudication"](pair=p, value="aligned", provenance="majority") for p in pairs if rng.random() < 0.05]
        m["Label"].objects.bulk_create(labels)
        m["Assignment"].objects.bulk_create(assignments)
        m["Adjudication"].objects.bulk_create(gold)
        counts["pair_rows"] += len(pairs)
        counts["labels"] += len(labels)
    return counts


def main() -> None:
    args = parse_args()
    backend, cleanup = setup_database()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "alignapp.settings")
    import django

    django.setup()
    try:
        old = build_old_shape(migrate(BEFORE), args)
        started = time.monotonic()
        apps = migrate(AFTER)
        seconds = time.monotonic() - started
        Label, LabelChange = apps.get_model("annotation", "Label"), apps.get_model("annotation", "LabelChange")
        after = {"pairs": apps.get_model("annotation", "CandidatePair").objects.count(),
                 "predictions": apps.get_model("annotation", "Prediction").objects.count(),
                 "labels": Label.objects.count(), "label_history": LabelChange.objects.count()}
        print(json.dumps({"backend": backend, "args": vars(args), "before": old, "after": after,
                          "labels_kept": after["labels"] + after["label_history"] == old["labels"],
                          "migrate_0004_to_0006_s": round(seconds, 2)}, indent=1))
    finally:
        cleanup()


if __name__ == "__main__":
    main()
