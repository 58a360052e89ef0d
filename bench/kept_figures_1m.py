"""What the kept figures (issue 37: ``review_state.kept``) cost on the big project, in process. Not a test.

    BENCH_DATABASE_URL=postgres://…/alignapp_big .venv/bin/python bench/kept_figures_1m.py [--pairs 1000000]

On the data set ``bench/big_project.py`` built: (1) each dashboard figure and run 1's scores computed and kept
(what the ``dashboard-figures`` and ``run-scores`` jobs do), (2) the dashboard (page and API) and the run page's
scores read back with the cache empty (a restarted server), (3) after a label is given: the same reads (the
figures of the state before, ``updating``, one job started), the jobs run in process, and the reads again. The
label and the jobs are removed afterwards and the figures of the data as built kept again. Prints JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def timed(f):
    t0 = time.perf_counter()
    value = f()
    return round(time.perf_counter() - t0, 3), value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=1_000_000)
    args = parser.parse_args()
    os.environ["DATABASE_URL"] = os.environ.get("BENCH_DATABASE_URL",
                                                "postgres://alignapp:alignapp-ci@127.0.0.1:5432/alignapp_big")
    os.environ.setdefault("CELERY_BROKER_DIR", "/tmp/kept_figures_broker")  # the jobs run here, not by a worker
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "alignapp.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.cache import cache

    from annotation.models import AlignmentRun, Job, Label, LabelChange, Project, Status
    from annotation.services.review import annotator, dashboard, labelling, review_state
    from annotation.services.review.label_input import LabelInput
    from annotation.services.training import run_scores

    project = Project.objects.select_related("label_scheme").get(name=f"big-project {args.pairs}")
    run = AlignmentRun.objects.filter(project=project).order_by("pk").first()
    out: dict = {"load_avg_1m": [os.getloadavg()[0]]}
    cache.clear()
    now = review_state.state(project)
    out["compute_s"] = {name: timed(lambda n=name, c=c: review_state.store(project, n, c, now))[0]
                        for name, c in dashboard._computations(project).items()}
    out["compute_s"]["run_scores"] = timed(lambda: run_scores.compute_run_scores(run))[0]

    def reads() -> dict:
        cache.clear()
        page_s, page = timed(lambda: dashboard.page_aggregates(project))
        api_s, api = timed(lambda: dashboard.dashboard(project))
        scores_s, scores = timed(lambda: run_scores.page_scores(run))
        return {"dashboard_page_s": page_s, "dashboard_api_s": api_s, "run_page_scores_s": scores_s,
                "updating": [page["updating"], api["updating"], scores["updating"]]}

    out["restart_same_state"] = reads()
    user = get_user_model().objects.get(username="big-project-a049")
    pair = (project.articles.order_by("pk").last().pairs.exclude(labels__annotator=user).order_by("pk").first())
    started = Job.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    label = labelling.submit_label(annotator.of(user, project), pair,
                                   LabelInput.parse(project.label_scheme, value="aligned", seconds=3.0),
                                   source=labelling.ARTICLE)[0]
    try:
        out["after_a_label"] = reads()
        jobs = list(Job.objects.filter(pk__gt=started, project=project, status=Status.QUEUED).order_by("pk"))
        out["jobs_started"] = [j.kind for j in jobs]
        out["jobs_s"] = {}
        for job in jobs:
            f = dashboard.run_figures_job if job.kind == dashboard.FIGURES_JOB else run_scores.run_scores_job
            out["jobs_s"][job.kind] = timed(lambda j=job, f=f: f(j.pk))[0]
        out["after_the_jobs"] = reads()
    finally:
        LabelChange.objects.filter(label_id=label.pk).delete()
        Label.objects.filter(pk=label.pk).delete()
        Job.objects.filter(pk__gt=started, project=project, kind__in=(dashboard.FIGURES_JOB, run_scores.SCORES_JOB)).delete()
        now = review_state.state(project)
        for name, c in dashboard._computations(project).items():
            review_state.store(project, name, c, now)
        run_scores._kept_scores(run, page=False)
        from annotation.services.review import adjudication
        cache.clear()
        adjudication.queue_pair_ids(project)
    out["load_avg_1m"].append(os.getloadavg()[0])
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
