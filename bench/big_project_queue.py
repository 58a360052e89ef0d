"""The queue part of ``bench/big_project.py`` (issue 37): 50 and 200 annotators, paced (a label every 3 s) and closed
loop, over real HTTP; each load's latency, labels/s, integrity (every acknowledged label stored exactly once) and
the CPU each label cost the load generator, gunicorn and PostgreSQL (read from ``/proc``)."""
from __future__ import annotations

import os
import subprocess
from types import SimpleNamespace

from bench.annotation_latency import integrity, log, run_load

TAG = "big-project"
ANNOTATORS = 50  # the build's annotators; the load's 200 come after them


def queue(base: str, url: str, project: int, seconds: float, server: subprocess.Popen | None = None,
          lean: bool = False) -> dict:
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    users = get_user_model().objects.filter(username__startswith=f"{TAG}-a").order_by("username")
    tokens = [Token.objects.get_or_create(user=u)[0].key for u in users[ANNOTATORS:ANNOTATORS + 200]]
    from annotation.models import Project
    from annotation.services.review import qc

    overlap = qc.qc_config(Project.objects.get(pk=project)).overlap
    result = {}
    for annotators in (50, 200):
        for mode, think in (("paced_3s", 3000), ("closed_loop", 0)):
            log(f"queue {annotators} annotators, {mode}")
            args = SimpleNamespace(think_ms=think, iterations=10**9, seconds=seconds, lean=lean)
            load_before = os.getloadavg()[0]
            cpu_before = cpu_snapshot(server)
            out = run_load(base, project, tokens[:annotators], args)
            # what each label cost each process on the machine (Redis not counted: shared by every engineer)
            out["cpu"] = cpu_spent(cpu_before, cpu_snapshot(server), out["labels"])
            # the machine is shared: each figure carries the 1-minute load average around it
            out["load_avg_1m"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
            # every acknowledged label stored exactly once, no pair past its overlap (the build's own
            # double-labelled pairs are older than the load and count in max_annotators_per_pair)
            out["integrity"] = integrity(project, overlap, out.pop("acknowledged"))
            result[f"{annotators}_{mode}"] = out
    forget_queue_labels(project)
    return result


def forget_queue_labels(project: int) -> None:
    """Delete what the queue load wrote (the load's annotators' labels and assignments), so every
    measurement of the data set — before or after a change — sees the same 50 annotators' labels
    (agreement, for one, grows with the number of annotators who labelled)."""
    from annotation.models import Assignment, Label, LabelChange

    mine = {"annotator__username__gte": f"{TAG}-a{ANNOTATORS:03d}", "pair__article__project_id": project}
    LabelChange.objects.filter(**mine).delete()
    Label.objects.filter(**mine).delete()
    Assignment.objects.filter(**mine).delete()
    vacuum_queue_tables()


def vacuum_queue_tables() -> None:
    """VACUUM (ANALYZE) the tables the cleanup just deleted from: left to autovacuum, it ran during the next
    loads (2026-11-28: twice in one queue measurement, the 50-annotator paced p95 140 ms instead of ~25 ms and the
    database's CPU a label 10x) — the bench's own deletes, not the queue's steady state."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for table in ("annotation_labelchange", "annotation_label", "annotation_assignment", "annotation_queuefrontier"):
            cursor.execute(f"VACUUM (ANALYZE) {table}")


def process_cpu_s(pids) -> dict[int, float]:
    """CPU seconds (user + system) each live process in ``pids`` has used so far, read from ``/proc``."""
    ticks = os.sysconf("SC_CLK_TCK")
    out = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        out[pid] = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime (fields 14 and 15 of stat)
    return out


def server_pids(server: subprocess.Popen) -> list[int]:
    """gunicorn's master and its workers (the master's session)."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) == server.pid:
                    pids.append(int(entry))
            except OSError:
                continue
    return pids


def database_pids() -> list[int]:
    """The PostgreSQL backends connected to this database (the server's and this process's)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
        return [pid for (pid,) in cursor.fetchall()]


def cpu_snapshot(server: subprocess.Popen | None) -> dict:
    import resource

    me = resource.getrusage(resource.RUSAGE_SELF)
    return {"generator": me.ru_utime + me.ru_stime,
            "gunicorn": process_cpu_s(server_pids(server)) if server is not None else {},
            "postgres": process_cpu_s(database_pids())}


def cpu_spent(before: dict, after: dict, labels: int) -> dict:
    """CPU ms per acknowledged label of the load generator (this process: its threads and ``requests``), gunicorn
    (master and workers) and the database's backends (a backend that appeared meanwhile counts whole)."""
    def delta(kind: str) -> float:
        if kind == "generator":
            return after[kind] - before[kind]
        return sum(cpu - before[kind].get(pid, 0.0) for pid, cpu in after[kind].items())

    return {f"{kind}_ms_per_label": round(delta(kind) * 1000 / max(1, labels), 2)
            for kind in ("generator", "gunicorn", "postgres")}
