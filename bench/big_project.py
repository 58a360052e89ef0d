"""A Wiki-Auto-sized project (issue 37): build it once with COPY, then time every page, list, the queue
and the client against a real gunicorn on PostgreSQL. Not a test; prints one JSON document.

    BENCH_DATABASE_URL=postgres://alignapp:alignapp-ci@127.0.0.1:5432/alignapp_big \\
        .venv/bin/python bench/big_project.py [--pairs 1000000] [--code DIR] [--seconds 15] [--skip queue,client]
            [--gold-everywhere]

Shape at ``--pairs N`` (the defaults: N = 1,000,000): N / 50 article pairs (one complex document of 10
sentences, one simple of 5, all 50 sentence pairs candidates), 3 runs each predicting every pair, 50
annotators; a tenth of the articles completed (each pair labelled once, the first quarter of those twice,
every third double-labelled pair adjudicated), so labels ≈ N / 8. The data set is built once into its own
database (``--rebuild`` to start again) with ``COPY`` — minutes at a million pairs, not the importer's hours.

``--code DIR`` serves the app from another checkout of the same schema (e.g. ``git archive`` of the code
before a change) so the same data are measured before and after. Cold = the first request to a freshly
started server (Django's cache flushed); warm = p50/p95 of the next ``--repeat`` requests. A big project's first
figures come from background jobs (issue 37: the pages say "computing", the APIs answer 202): ``pages.computed``
gives the seconds from the request that started each job until its API answers with the figures (a Celery worker
must consume the server's broker: start one with the same ``DATABASE_URL`` and ``CELERY_BROKER_DIR``), and
``jobs`` each job's own time.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.annotation_latency import (  # noqa: E402 - after the path
    ensure_database,
    log,
    percentile,
    serve,
    stop_server,
)
from bench.big_project_measure import FORMATS, exports, list_marks  # noqa: E402
from bench.big_project_queue import ANNOTATORS, TAG, forget_queue_labels, queue  # noqa: E402

COMPLEX, SIMPLE = 10, 5  # sentences a side: 50 candidate pairs an article pair
RUNS = 3


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=1_000_000, help="candidate pairs (50 per article pair)")
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout gunicorn serves (same schema)")
    parser.add_argument("--rebuild", action="store_true", help="drop the bench project and build it again")
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--gold-everywhere", action="store_true",
                        help="label and complete every unlabelled article pair once (bench/big_project_gold.py), "
                             "so the gold exports read every pair")
    parser.add_argument("--seconds", type=float, default=15.0, help="each queue load")
    parser.add_argument("--repeat", type=int, default=5, help="warm requests per page")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--skip", default="", help="comma-separated: pages, lists, queue, client, exports")
    parser.add_argument("--pages", default="", help="comma-separated page names to measure (default: every page)")
    parser.add_argument("--client-pairs", type=int, default=None, help="pairs the client reads (default: all)")
    parser.add_argument("--exports", default=",".join(f"{k}:{f}" for k in ("gold", "auto") for f in FORMATS),
                        help="exports to run: gold:<format>, auto:<format> (run 1, every pair), <kind>:all")
    parser.add_argument("--lean-generator", action="store_true",
                        help="the queue loads send their requests with http.client instead of requests (the same "
                             "requests; less of the shared cores spent by the load generator)")
    parser.add_argument("--profile-queue", type=int, default=0, metavar="N",
                        help="also time N submit→next in this process (this checkout), in the service and through "
                             "the whole Django stack: ms, CPU and statements each")
    return parser.parse_args()


# -- building -------------------------------------------------------------------------------------------
def copy_rows(cursor, model, columns: list[str], rows) -> int:
    """``COPY`` ``rows`` (tuples in ``columns`` order) into ``model``'s table; JSON columns as text."""
    table = model._meta.db_table
    n = 0
    with cursor.copy(f'COPY "{table}" ({", ".join(columns)}) FROM STDIN') as copy:
        for row in rows:
            copy.write_row(row)
            n += 1
    return n


def build(pairs_wanted: int) -> dict:
    """The bench project at ``pairs_wanted`` pairs (see the module); reused when it exists at that size."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.utils import timezone
    from rest_framework.authtoken.models import Token

    from annotation.models import (
        Adjudication,
        AlignmentRun,
        Article,
        ArticleCompletion,
        Assignment,
        CandidatePair,
        Document,
        Label,
        LabelScheme,
        Membership,
        PairSentence,
        Paragraph,
        Prediction,
        Project,
        Sentence,
        Status,
    )

    name = f"{TAG} {pairs_wanted}"
    existing = Project.objects.filter(name=name).first()
    if existing is not None:
        return {"project": existing.pk, "built_s": None, **existing.config.get("bench", {})}
    began = time.monotonic()
    articles = max(1, pairs_wanted // (COMPLEX * SIMPLE))
    completed = max(1, articles // 10)
    twice = max(1, completed // 4)
    User = get_user_model()
    now = timezone.now()
    rng = random.Random(37)
    with transaction.atomic():
        project = Project.objects.create(
            name=name, label_scheme=LabelScheme.objects.get(slug="aligned-partial-not"),
            config={"qc": {"overlap": 1, "min_seconds": 0, "test_every": 0}})
        researcher, _ = User.objects.get_or_create(username=f"{TAG}-researcher")
        researcher.set_password(TAG)
        researcher.save()
        Membership.objects.get_or_create(project=project, user=researcher, defaults={"role": "researcher"})
        annotators = []
        for i in range(ANNOTATORS + 200):  # 50 who labelled, and up to 200 for the queue load
            user, _ = User.objects.get_or_create(username=f"{TAG}-a{i:03d}")
            Membership.objects.get_or_create(project=project, user=user, defaults={"role": "annotator"})
            annotators.append(user.pk)
        runs = [AlignmentRun.objects.create(project=project, method=m, status=Status.SUCCEEDED, progress=100,
                                            articles_total=articles, articles_done=articles, pair_count=0)
                for m in ("tfidf", "jaccard", "charngram")][:RUNS]
        with connection.cursor() as django_cursor:
            cur = django_cursor.cursor  # psycopg's own, for COPY
            def reserve(model, n: int) -> int:
                """The first of ``n`` fresh ids of ``model``'s table (its sequence moved past them)."""
                table = model._meta.db_table
                cur.execute(f"SELECT setval(pg_get_serial_sequence('\"{table}\"', 'id'), "
                            f"nextval(pg_get_serial_sequence('\"{table}\"', 'id')) + %s - 1)", [n])
                return cur.fetchone()[0] - n + 1

            a0 = reserve(Article, articles)
            copy_rows(cur, Article, ["id", "project_id", "title", "source", "meta", "created_at"],
                      ((a0 + a, project.pk, f"Wiki article {a}", "bench", "{}", now) for a in range(articles)))
            d0 = reserve(Document, 2 * articles)  # article a: complex d0+2a, simple d0+2a+1
            copy_rows(cur, Document, ["id", "article_id", "level", "rank", "meta"],
                      ((d0 + 2 * a + side, a0 + a, ("en", "simple")[side], side, "{}")
                       for a in range(articles) for side in (0, 1)))
            p0 = reserve(Paragraph, 2 * articles)
            copy_rows(cur, Paragraph, ["id", "document_id", "index"],
                      ((p0 + d, d0 + d, 0) for d in range(2 * articles)))
            per = COMPLEX + SIMPLE
            s0 = reserve(Sentence, per * articles)  # article a: complex s0+per*a+i, simple s0+per*a+COMPLEX+j

            def sentences():
                for a in range(articles):
                    for i in range(COMPLEX):
                        yield (s0 + per * a + i, d0 + 2 * a, p0 + 2 * a, i,
                               f"In {1900 + a % 100}, the council of district {a} debated proposal {i} at length.")
                    for j in range(SIMPLE):
                        yield (s0 + per * a + COMPLEX + j, d0 + 2 * a + 1, p0 + 2 * a + 1, j,
                               f"District {a} talked about plan {j}.")
            copy_rows(cur, Sentence, ["id", "document_id", "paragraph_id", "index", "text"], sentences())
            n_pairs = articles * COMPLEX * SIMPLE
            c0 = reserve(CandidatePair, n_pairs)  # pair of article a, (i, j): c0 + 50a + 5i + j
            scores = [round(rng.random(), 4) for _ in range(997)]

            def pairs():
                for a in range(articles):
                    for i in range(COMPLEX):
                        for j in range(SIMPLE):
                            k = COMPLEX * SIMPLE * a + SIMPLE * i + j
                            score = scores[k % 997]
                            yield (c0 + k, a0 + a, d0 + 2 * a, d0 + 2 * a + 1, str(i), str(j), score,
                                   "aligned" if score > 0.5 else "not-aligned", "{}", "model", False, now)
            copy_rows(cur, CandidatePair, ["id", "article_id", "complex_document_id", "simple_document_id",
                                           "complex_key", "simple_key", "score", "predicted_label", "features",
                                           "origin", "identical", "created_at"], pairs())

            def members():
                for a in range(articles):
                    for i in range(COMPLEX):
                        for j in range(SIMPLE):
                            k = c0 + COMPLEX * SIMPLE * a + SIMPLE * i + j
                            yield (k, s0 + per * a + i, "complex")
                            yield (k, s0 + per * a + COMPLEX + j, "simple")
            copy_rows(cur, PairSentence, ["pair_id", "sentence_id", "side"], members())
            for r, run in enumerate(runs):
                copy_rows(cur, Prediction, ["run_id", "pair_id", "score", "predicted_label", "features", "rank",
                                            "created_at"],
                          ((run.pk, c0 + k, scores[(k + r) % 997], "aligned" if scores[(k + r) % 997] > 0.5
                            else "not-aligned", "{}", None, now) for k in range(n_pairs)))
            AlignmentRun.objects.filter(pk__in=[r.pk for r in runs]).update(pair_count=n_pairs)
            values = ("aligned", "partial", "not-aligned")
            labelled: list[tuple[int, int, str, int]] = []  # (pair, annotator, value, article)
            for a in range(completed):
                first, second = annotators[a % ANNOTATORS], annotators[(a + 1) % ANNOTATORS]
                for k in range(COMPLEX * SIMPLE):
                    pair = c0 + COMPLEX * SIMPLE * a + k
                    labelled.append((pair, first, values[(pair * 7) % 3], a))
                    if a < twice:
                        labelled.append((pair, second, values[(pair * 11) % 3], a))
            copy_rows(cur, Label, ["pair_id", "annotator_id", "value", "ratings", "comment", "seconds", "source",
                                   "is_test_question", "client_token", "created_at", "updated_at"],
                      ((p, u, v, "{}", "", 12.0, "queue", False, uuid.uuid4(), now, now) for p, u, v, _ in labelled))
            copy_rows(cur, Assignment, ["pair_id", "annotator_id", "status", "is_test", "assigned_at", "completed_at"],
                      ((p, u, "done", False, now, now) for p, u, _, _ in labelled))
            done = {(a, u) for _, u, _, a in labelled}
            copy_rows(cur, ArticleCompletion, ["article_id", "complex_document_id", "simple_document_id",
                                               "annotator_id", "seconds", "completed_at"],
                      ((a0 + a, d0 + 2 * a, d0 + 2 * a + 1, u, 600.0, now) for a, u in sorted(done)))
            adjudicated = [c0 + COMPLEX * SIMPLE * a + k for a in range(twice) for k in range(0, COMPLEX * SIMPLE, 3)]
            copy_rows(cur, Adjudication, ["pair_id", "value", "provenance", "reviewer_id", "note", "created_at"],
                      ((p, values[p % 3], Adjudication.ADJUDICATED, researcher.pk, "", now) for p in adjudicated))
        summary = {"pairs": n_pairs, "article_pairs": articles, "runs": len(runs), "labels": len(labelled),
                   "annotators_who_labelled": ANNOTATORS, "completed_article_pairs": completed,
                   "adjudications": len(adjudicated)}
        project.config = {**project.config, "bench": summary}
        project.save(update_fields=["config"])
        Token.objects.get_or_create(user=researcher)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return {"project": project.pk, "built_s": round(time.monotonic() - began, 1), **summary}


# -- measuring ------------------------------------------------------------------------------------------
def start_server(url: str, code: Path, workers: int, threads: int) -> tuple[subprocess.Popen, str]:
    return serve(url, cwd=code, workers=workers, threads=threads, keep_alive=10, extra_env={"PYTHONPATH": str(code)},
                 extra_args=("--timeout", "600"), wait_s=90)


def session(base: str, username: str):
    """A signed-in browser-like session (cookie and CSRF) for the pages."""
    import requests

    s = requests.Session()
    s.get(base + "/login/", timeout=60)
    s.post(base + "/login/", data={"username": username, "password": TAG,
                                   "csrfmiddlewaretoken": s.cookies.get("csrftoken", "")},
           headers={"Referer": base + "/login/"}, timeout=60)
    return s


def timed(s, method: str, url: str, **kwargs) -> tuple[float, int | str]:
    """Seconds and status of one request; a redirect's status names where it went (a login page is no page)."""
    t0 = time.perf_counter()
    response = s.request(method, url, timeout=600, **kwargs)
    status = response.status_code if not response.history else f"{response.history[0].status_code} -> {response.url}"
    return round(time.perf_counter() - t0, 3), status


def cold_warm(s, method: str, url: str, repeat: int, **kwargs) -> dict:
    cold, status = timed(s, method, url, **kwargs)
    warm = [timed(s, method, url, **kwargs)[0] for _ in range(repeat)]
    return {"status": status, "cold_s": cold, "warm_p50_s": round(statistics.median(warm), 3),
            "warm_p95_s": round(percentile(warm, 95), 3)}


def pages(base: str, researcher, annotator, project: int, runs: list[int], article: int, repeat: int,
          only: set[str]) -> dict:
    p = f"{base}/projects/{project}/"
    api = f"{base}/api/projects/{project}/"
    csrf = {"X-CSRFToken": researcher.cookies.get("csrftoken", ""), "Referer": base}
    plan = {  # page: (session, method, url, extra) — each page with the API call its script makes first
        "dashboard": (researcher, "GET", f"{p}dashboard/", {}),
        "dashboard_api": (researcher, "GET", f"{api}dashboard/", {}),
        "score_distribution_api": (researcher, "GET", f"{api}score-distribution/", {}),  # the dashboard's script's
        "project": (researcher, "GET", p, {}),
        "run": (researcher, "GET", f"{p}runs/{runs[0]}/", {}),
        "run_pairs_api": (researcher, "GET", f"{base}/api/pairs/?project={project}&run={runs[0]}", {}),
        "compare_runs": (researcher, "GET", f"{p}runs/compare/?a={runs[0]}&b={runs[1]}", {}),
        "my_labels": (annotator, "GET", f"{p}my-labels/", {}),
        "my_labels_api": (annotator, "GET", f"{base}/api/labels/?mine=1&project={project}", {}),
        "curation": (researcher, "GET", f"{base}/articles/{article}/curate/", {}),
        "adjudication": (researcher, "GET", f"{p}adjudicate/", {}),
        "adjudication_api": (researcher, "GET", f"{api}adjudication/", {}),
        "models": (researcher, "GET", f"{p}models/", {}),
        "export": (researcher, "GET", f"{p}export/", {}),
        "export_preview_api": (researcher, "POST", f"{api}exports/preview/",
                               {"json": {"options": {"kind": "gold"}}, "headers": csrf}),
        "whole_article": (researcher, "GET", f"{base}/articles/{article}/", {}),
        "annotate": (annotator, "GET", f"{p}annotate/", {}),
        "run_scores_api": (researcher, "GET", f"{base}/api/runs/{runs[0]}/", {}),
        "compare_runs_api": (researcher, "GET", f"{base}/api/runs/compare/?old={runs[0]}&new={runs[1]}&pairs=1", {}),
    }
    results: dict = {}
    first_at: dict[str, float] = {}
    for name, (s, method, url, extra) in plan.items():
        if only and name not in only:
            continue
        log(f"page {name}")
        first_at[name] = time.monotonic()
        results[name] = cold_warm(s, method, url, repeat, **extra)
    results["computed"] = until_computed(plan, first_at, {name: r["status"] for name, r in results.items()})
    return results


# an API answering 202 ("being computed": a big project's first figures, issue 37) → the request that started its job
COMPUTED_BY = {"dashboard_api": "dashboard", "score_distribution_api": "score_distribution_api",
               "run_scores_api": "run", "compare_runs_api": "compare_runs_api",
               "export_preview_api": "export_preview_api"}


def until_computed(plan: dict, first_at: dict[str, float], results_status: dict, limit_s: float = 900.0) -> dict:
    """Seconds from the first request that started each job (the page, or the API itself) until its API answers
    with the figures (not 202), asked every 0.5 s — the "computing …" time a user sees on a big project's first view."""
    out = {}
    for name, starter in COMPUTED_BY.items():
        if name not in first_at or starter not in first_at:
            continue
        s, method, url, extra = plan[name]
        if results_status.get(name) != 202:
            out[name] = {"status": results_status.get(name), "figures_after_s": 0.0, "since": starter}  # kept: at once
            continue
        while True:
            status = timed(s, method, url, **extra)[1]
            waited = time.monotonic() - first_at[starter]
            if status != 202 or waited > limit_s:
                break
            time.sleep(0.5)
        out[name] = {"status": status, "figures_after_s": round(waited, 1), "since": starter}
        log(f"computed {name}: {out[name]}")
    return out


def client_iteration(base: str, token: str, project: int, limit: int | None) -> dict:
    """The client reading the pairs (the first ``limit`` when given: a rate, not a whole walk)."""
    sys.path.insert(0, str(ROOT / "client"))
    import logging

    from alignapp_client import Client

    logging.getLogger("httpx").setLevel(logging.WARNING)

    client = Client(base, token, timeout=600)
    out = {}
    for page_size in (None, 1000):
        t0 = time.perf_counter()
        kwargs = {} if page_size is None else {"page_size": page_size}
        n = sum(1 for _ in itertools.islice(client.pairs(project, **kwargs), limit))
        took = time.perf_counter() - t0
        out[f"page_size_{page_size or 'default'}"] = {"pairs": n, "seconds": round(took, 1),
                                                      "pairs_per_s": round(n / took)}
    return out


def main() -> int:
    args = parse_args()
    url = os.environ.get("BENCH_DATABASE_URL", "postgres://alignapp:alignapp-ci@127.0.0.1:5432/alignapp_big")
    ensure_database(url)
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "alignapp.settings")
    import django

    django.setup()
    from django.core.cache import cache
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    if args.rebuild:
        from annotation.models import Project
        Project.objects.filter(name=f"{TAG} {args.pairs}").delete()
    log(f"building (or reusing) {args.pairs} pairs")
    data = build(args.pairs)
    if args.gold_everywhere:
        from bench.big_project_gold import gold_everywhere

        log("gold on every pair (or reusing it)")
        data["gold_everywhere"] = gold_everywhere(data["project"])
    report = {"scale": data, "code": str(args.code), "server": f"gunicorn gthread {args.workers}x{args.threads}"}
    if args.build_only:
        print(json.dumps(report, indent=1))
        return 0
    from django.utils import timezone
    from rest_framework.authtoken.models import Token

    from annotation.models import AlignmentRun, Article, Job

    started_at = timezone.now()

    project = data["project"]
    runs = list(AlignmentRun.objects.filter(project_id=project).order_by("id").values_list("id", flat=True))
    article = Article.objects.filter(project_id=project).order_by("id").values_list("id", flat=True)[3]
    token = Token.objects.get(user__username=f"{TAG}-researcher").key
    from django.contrib.auth import get_user_model
    annotator = get_user_model().objects.get(username=f"{TAG}-a000")
    annotator.set_password(TAG)
    annotator.save()
    skip = set(filter(None, args.skip.split(",")))
    forget_queue_labels(project)  # an earlier measurement stopped before it cleaned up
    cache.clear()
    if args.profile_queue:
        from bench.queue_profile import profile_queue, profile_queue_http

        report["queue_profile"] = profile_queue(project, f"{TAG}-a{ANNOTATORS + 199:03d}", args.profile_queue)
        forget_queue_labels(project)
        report["queue_profile_http"] = profile_queue_http(project, f"{TAG}-a{ANNOTATORS + 199:03d}", args.profile_queue)
        forget_queue_labels(project)
    server, base = start_server(url, args.code, args.workers, args.threads)
    try:
        if "pages" not in skip:
            report["pages"] = pages(base, session(base, f"{TAG}-researcher"), session(base, f"{TAG}-a000"),
                                    project, runs, article, args.repeat, set(filter(None, args.pages.split(","))))
        if "lists" not in skip:
            report["lists"] = list_marks(base, token, project, runs, args.repeat)
        if "client" not in skip:
            report["client"] = client_iteration(base, token, project, args.client_pairs)
        if "queue" not in skip:
            report["queue"] = queue(base, url, project, args.seconds, server, args.lean_generator)
            report["load_generator"] = "http.client" if args.lean_generator else "requests"
    finally:
        stop_server(server)
    if "exports" not in skip:
        report["exports"] = exports(args.code, url, project, runs, f"{TAG}-researcher", args.exports.split(","),
                                    Path(os.environ.get("BENCH_MEDIA", "/tmp/big_project_media")))
    report["jobs"] = [{"kind": kind, "params": params, "status": status, "seconds": round((done - began).total_seconds(), 1)}
                      for kind, params, status, began, done in Job.objects.filter(project_id=project, created_at__gte=started_at)
                      .order_by("pk").values_list("kind", "params", "status", "started_at", "finished_at") if began and done]
    report["load_average"] = os.getloadavg()
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
