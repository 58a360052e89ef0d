"""Labelling-loop latency under concurrent annotators (not a test). Prints one JSON summary.

Simulated annotators — threads, each with its own API token and HTTP session — work through a
bench project's queue over real HTTP against a gunicorn server started here on 127.0.0.1, on
PostgreSQL. Each iteration is what the labelling page does per item: one ``POST …/queue/submit/``
that stores the label and answers with the next item. Target: p95 < 50 ms.

    BENCH_DATABASE_URL=postgres://alignapp:alignapp-ci@127.0.0.1:5432/alignapp_bench \\
        .venv/bin/python bench/annotation_latency.py [--annotators 20] [--seconds 20] [--think-ms 0]

The database is created when missing (and then dropped at the end); the bench project, its
corpus and its users are always deleted afterwards. Progress goes to stderr.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from urllib.parse import urlparse, urlunparse

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20.0, help="how long the measured phase lasts")
    parser.add_argument("--iterations", type=int, default=500, help="at most this many labels per annotator")
    parser.add_argument("--think-ms", type=float, default=0.0,
                        help="mean pause between an answer and the next label (uniform ±50%%; 0 = closed loop)")
    parser.add_argument("--pairs", type=int, default=3000)
    parser.add_argument("--gold", type=int, default=60, help="gold pairs serving as hidden test questions")
    parser.add_argument("--overlap", type=int, default=2)
    parser.add_argument("--workers", type=int, default=max(2, os.cpu_count() or 1))
    parser.add_argument("--threads", type=int, default=1, help="gunicorn threads per worker (gthread)")
    return parser.parse_args()


# --- Database --------------------------------------------------------------------------------------

def ensure_database(url: str) -> bool:
    """Create the database named in ``url`` if it does not exist; returns True when created here."""
    import psycopg
    from psycopg import sql

    parts = urlparse(url)
    name = parts.path.lstrip("/")
    admin = urlunparse(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            return False
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return True


def drop_database(url: str) -> None:
    import psycopg
    from psycopg import sql

    parts = urlparse(url)
    with psycopg.connect(urlunparse(parts._replace(path="/postgres")), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(parts.path.lstrip("/"))))


def setup_django(url: str) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "alignapp.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def create_data(args, tag: str) -> tuple[int, list[str]]:
    """A bench project with ``args.pairs`` queued 1:1 pairs (+ gold test pairs) and its annotators'
    API tokens. Bulk inserts: a few seconds for thousands of pairs."""
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from annotation.models import (
        Adjudication,
        AlignmentRun,
        Article,
        CandidatePair,
        Document,
        LabelScheme,
        Membership,
        PairSentence,
        Paragraph,
        Prediction,
        Project,
        Sentence,
        Side,
        Status,
    )

    User = get_user_model()
    project = Project.objects.create(
        name=f"bench {tag}", label_scheme=LabelScheme.objects.get(slug="aligned-partial-not"),
        config={"qc": {"overlap": args.overlap, "min_seconds": 0, "test_every": 5}})
    run = AlignmentRun.objects.create(project=project, method="tfidf", status=Status.SUCCEEDED)
    per_article = 150
    total = args.pairs + args.gold
    n_articles = -(-total // per_article)
    for a in range(n_articles):
        article = Article.objects.create(project=project, title=f"Bench article {a}")
        count = min(per_article, total - a * per_article)
        docs = []
        for rank, (level, template) in enumerate((("adv", "The committee in region {a} formally approved measure {i} "
                                                          "after a long and heated public debate."),
                                                  ("ele", "Region {a} agreed to plan {i} after a long debate."))):
            doc = Document.objects.create(article=article, level=level, rank=rank)
            paragraph = Paragraph.objects.create(document=doc, index=0)
            Sentence.objects.bulk_create([Sentence(document=doc, paragraph=paragraph, index=i,
                                                   text=template.format(a=a, i=i)) for i in range(count)])
            docs.append(doc)
        pairs = CandidatePair.objects.bulk_create([
            CandidatePair(article=article, complex_document=docs[0], simple_document=docs[1],
                          complex_key=str(i), simple_key=str(i), score=0.8, predicted_label="aligned", origin="model")
            for i in range(count)])
        Prediction.objects.bulk_create([Prediction(run=run, pair=p, score=0.8, predicted_label="aligned") for p in pairs])
        ids = {(s.document_id, s.index): s.pk for s in Sentence.objects.filter(document__in=docs)}
        PairSentence.objects.bulk_create(
            [PairSentence(pair=p, sentence_id=ids[(docs[0].pk, i)], side=Side.COMPLEX) for i, p in enumerate(pairs)]
            + [PairSentence(pair=p, sentence_id=ids[(docs[1].pk, i)], side=Side.SIMPLE) for i, p in enumerate(pairs)])
    gold = CandidatePair.objects.filter(article__project=project).order_by("-id")[:args.gold]
    Adjudication.objects.bulk_create([Adjudication(pair=p, value="aligned", provenance=Adjudication.IMPORTED) for p in gold])
    tokens = []
    for i in range(args.annotators):
        user = User.objects.create_user(username=f"bench-{tag}-{i:02d}", password=uuid.uuid4().hex)
        Membership.objects.create(project=project, user=user, role="annotator")
        tokens.append(Token.objects.create(user=user).key)
    return project.pk, tokens


def analyze() -> None:
    """Planner statistics for the freshly loaded tables, as autovacuum keeps them on a live database:
    without them PostgreSQL guesses row counts and may sort every candidate pair instead of walking
    the primary key for the queue's LIMIT 1."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def delete_data(project_id: int, tag: str) -> None:
    from django.contrib.auth import get_user_model

    from annotation.models import Project

    Project.objects.filter(pk=project_id).delete()
    get_user_model().objects.filter(username__startswith=f"bench-{tag}-").delete()


def integrity(project_id: int, overlap: int, acked: list[tuple[str, int]]) -> dict:
    """Checks on what the run wrote: no pair beyond its overlap, one label per (pair, annotator), and every
    label the server acknowledged (2xx) stored exactly once."""
    from django.db.models import Count
    from rest_framework.authtoken.models import Token

    from annotation.models import Assignment, Label

    user_of = dict(Token.objects.filter(key__in={t for t, _ in acked}).values_list("key", "user_id"))
    stored = Counter(Label.objects.filter(pair__article__project_id=project_id).values_list("annotator_id", "pair_id"))
    acked_keys = Counter((user_of[t], p) for t, p in acked)
    missing = sum(1 for k in acked_keys if stored[k] == 0)
    twice = sum(1 for k in acked_keys if stored[k] > 1 or acked_keys[k] > 1)

    active = (Assignment.objects.filter(pair__article__project_id=project_id, status__in=("open", "done"), is_test=False)
              .values("pair").annotate(n=Count("id")))
    labels = Label.objects.filter(pair__article__project_id=project_id)
    return {"max_annotators_per_pair": max((r["n"] for r in active), default=0), "overlap": overlap,
            "labels": labels.count(), "test_answers": labels.filter(is_test_question=True).count(),
            "duplicate_labels": labels.values("pair", "annotator").annotate(n=Count("id")).filter(n__gt=1).count(),
            "acknowledged": len(acked), "acknowledged_missing": missing, "acknowledged_not_exactly_once": twice}


# --- Server -----------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(url: str, args) -> tuple[subprocess.Popen, str]:
    # keep idle connections longer than an annotator's pause (as a proxy in front would):
    # gunicorn's default of 2 s closes them between labels and a reused one then fails
    return serve(url, cwd=ROOT, workers=args.workers, threads=args.threads,
                 keep_alive=max(5, int(args.think_ms * 1.5 / 1000) + 5))


def serve(url: str, *, cwd: Path, workers: int, threads: int, keep_alive: int, extra_env: dict | None = None,
          extra_args: tuple[str, ...] = (), wait_s: float = 60) -> tuple[subprocess.Popen, str]:
    """gunicorn (gthread) serving the checkout ``cwd`` on ``url``'s database, once ``/healthz`` answers."""
    import requests

    port = free_port()
    env = {**os.environ, "DATABASE_URL": url, "DEBUG": "0", "DB_CONN_MAX_AGE": "300", "LOG_LEVEL": "WARNING",
           **(extra_env or {})}
    gunicorn = Path(sys.executable).with_name("gunicorn")
    command = [str(gunicorn), "alignapp.wsgi:application", "--bind", f"127.0.0.1:{port}",
               "--workers", str(workers), "--worker-class", "gthread", "--threads", str(threads),
               "--log-level", "warning", "--keep-alive", str(keep_alive), *extra_args]
    server = subprocess.Popen(command, cwd=cwd, env=env, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            if requests.get(base + "/healthz", timeout=2).ok:
                return server, base
        except requests.RequestException:
            pass
        if server.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {server.returncode}")
        time.sleep(0.2)
    raise RuntimeError(f"gunicorn did not answer /healthz within {wait_s:.0f} s")


def stop_server(server: subprocess.Popen) -> None:
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)


# --- Load ------------------------------------------------------------------------------------------

class RequestsSession:
    """The load generator's usual client: one ``requests.Session`` (the token, JSON, keep-alive) per annotator."""

    def __init__(self, base: str, token: str) -> None:
        import requests

        self.base, self.session = base, requests.Session()
        self.session.headers["Authorization"] = f"Token {token}"

    def call(self, method: str, path: str, body: dict | None = None, timeout: float = 30) -> tuple[int, bytes]:
        response = self.session.request(method, self.base + path, json=body, timeout=timeout)
        return response.status_code, response.content


class LeanSession:
    """The same requests as :class:`RequestsSession` (the token, JSON, one keep-alive connection), on
    ``http.client`` alone: ``requests`` costs the load generator, on the same cores as the server, about 1.5-2 ms
    of CPU a label (issue 37). ``--lean-generator`` in ``bench/big_project.py``."""

    def __init__(self, base: str, token: str) -> None:
        import http.client

        address = urlparse(base)
        self.connection = http.client.HTTPConnection(address.hostname, address.port, timeout=120)
        self.headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}

    def call(self, method: str, path: str, body: dict | None = None, timeout: float = 30) -> tuple[int, bytes]:
        self.connection.timeout = timeout
        if self.connection.sock is not None:
            self.connection.sock.settimeout(timeout)
        self.connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=self.headers)
        response = self.connection.getresponse()
        return response.status, response.read()


def annotate(base: str, project_id: int, token: str, args, start: threading.Barrier, stop_at: list,
             latencies: list, errors: list, acked: list) -> int:
    """One annotator: a warm-up ``next`` (not measured), then ``submit`` → next item until the load ends, each
    submit timed; on a :class:`LeanSession` with ``args.lean``, else a :class:`RequestsSession` (the same requests).
    ``requests``' errors are ``OSError``s too."""
    api = f"/api/projects/{project_id}/queue/"
    session = (LeanSession if getattr(args, "lean", False) else RequestsSession)(base, token)
    try:  # warm-up, not measured (a slow first item is an error, and the others still start)
        item = json.loads(session.call("GET", api + "next/", timeout=120)[1])["item"]
    except (OSError, ValueError, KeyError) as exc:
        errors.append(f"warm-up {type(exc).__name__}: {exc}"[:200])
        item = None
    start.wait()
    pace = random.Random(token)
    if args.think_ms:  # annotators don't start in lockstep
        time.sleep(pace.uniform(0, args.think_ms) / 1000)
    labels = 0
    while item is not None and labels < args.iterations and time.monotonic() < stop_at[0]:
        body = {"pair": item["pair"], "value": "aligned", "seconds": 11.0, "client_token": str(uuid.uuid4())}
        t0 = time.perf_counter()
        try:
            status, data = session.call("POST", api + "submit/", body, timeout=30)
        except OSError as exc:  # counted, never a silently dead client
            errors.append(f"{type(exc).__name__}: {exc}"[:200])
            break
        latencies.append((time.perf_counter() - t0) * 1000)
        if status not in (200, 201):
            errors.append(f"{status}: {data[:200].decode(errors='replace')}")
            break
        labels += 1
        acked.append((token, body["pair"]))  # acknowledged by the server: must be stored exactly once
        item = json.loads(data)["item"]
        if args.think_ms:
            time.sleep(pace.uniform(0.5, 1.5) * args.think_ms / 1000)
    return labels


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def run_load(base: str, project_id: int, tokens: list[str], args) -> dict:
    latencies: list[float] = []
    errors: list[str] = []
    counts: list[int] = [0] * len(tokens)
    acked: list[tuple[str, int]] = []
    start = threading.Barrier(len(tokens) + 1)
    stop_at = [float("inf")]


    def worker(i):
        counts[i] = annotate(base, project_id, tokens[i], args, start, stop_at, latencies, errors, acked)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(tokens))]
    for t in threads:
        t.start()
    start.wait()
    began = time.monotonic()
    stop_at[0] = began + args.seconds
    for t in threads:
        t.join()
    wall = time.monotonic() - began
    return {
        "requests": len(latencies), "labels": sum(counts), "errors": len(errors), "first_errors": errors[:3],
        "acknowledged": acked,
        "wall_s": round(wall, 2), "throughput_labels_per_s": round(sum(counts) / wall, 1),
        "latency_ms": {"p50": round(percentile(latencies, 50), 1), "p95": round(percentile(latencies, 95), 1),
                       "p99": round(percentile(latencies, 99), 1), "mean": round(statistics.fmean(latencies), 1),
                       "max": round(max(latencies), 1)} if latencies else None,
    }


def main() -> int:
    args = parse_args()
    url = os.environ.get("BENCH_DATABASE_URL")
    if not url or not url.startswith(("postgres://", "postgresql://")):
        print("set BENCH_DATABASE_URL=postgres://USER:PASSWORD@HOST:PORT/DBNAME (created if missing)", file=sys.stderr)
        return 2
    created = ensure_database(url)
    log(f"database {'created' if created else 'exists'}; migrating")
    tag = uuid.uuid4().hex[:8]
    server = project_id = None
    try:
        setup_django(url)
        t0 = time.monotonic()
        project_id, tokens = create_data(args, tag)
        analyze()
        log(f"created {args.pairs} pairs + {args.gold} gold, {args.annotators} annotators in {time.monotonic() - t0:.1f} s")
        server, base = start_server(url, args)
        log(f"gunicorn at {base} ({args.workers} workers x {args.threads} threads); measuring for {args.seconds:g} s")
        result = run_load(base, project_id, tokens, args)
        acked = result.pop("acknowledged")
        stop_server(server)
        server = None
        summary = {
            "benchmark": "annotation_latency", "operation": "POST queue/submit/ (label + next item)",
            "annotators": args.annotators, "think_ms": args.think_ms, "pairs": args.pairs, "gold": args.gold,
            "overlap": args.overlap, "server": f"gunicorn gthread {args.workers}x{args.threads}, 127.0.0.1",
            "database": "postgresql", "cpus": os.cpu_count(), **result,
            "target_p95_ms": 50, "meets_target": bool(result["latency_ms"] and result["latency_ms"]["p95"] < 50),
            "integrity": integrity(project_id, args.overlap, acked),
        }
        print(json.dumps(summary, indent=2))
        return 0 if not result["errors"] else 1
    finally:
        if server is not None:
            stop_server(server)
        if project_id is not None:
            delete_data(project_id, tag)
        from django.db import connections

        connections.close_all()
        if created:
            drop_database(url)
        log("cleaned up")


if __name__ == "__main__":
    sys.exit(main())
