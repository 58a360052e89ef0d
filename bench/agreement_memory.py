"""What a big project's agreement costs the ``dashboard-figures`` job, in process (issue 37). Not a test.

    BENCH_DATABASE_URL=postgres://…/alignapp_big37g .venv/bin/python bench/agreement_memory.py [--project 3]

On a project ``bench/big_project.py --gold-everywhere`` built (1,000,000 pairs, every one with gold): the votes the
gold reads (``agreement_votes.vote_rows``: labels plus each completion's implied "not"), the agreement summaries of
the scheme's kind, and the per-document-pair agreement — each step's seconds and the process's peak RSS after it,
with a digest of the rows (sorted) and of the result, so a change that should not alter them can be checked.
Prints JSON.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def peak_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--project", type=int, default=3)
    args = parser.parse_args()
    os.environ["DATABASE_URL"] = os.environ.get("BENCH_DATABASE_URL",
                                                "postgres://alignapp:alignapp-ci@127.0.0.1:5432/alignapp_big37g")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "alignapp.settings")
    import django

    django.setup()
    from annotation.label_schemes import scheme_kind
    from annotation.models import Project
    from annotation.services.review import agreement, agreement_votes

    project = Project.objects.select_related("label_scheme").get(pk=args.project)
    report: dict = {"project": project.pk, "start_peak_mb": peak_mb()}
    t0 = time.perf_counter()
    rows = agreement_votes.vote_rows(project)
    report["vote_rows"] = {"rows": len(rows), "seconds": round(time.perf_counter() - t0, 1), "peak_mb": peak_mb(),
                           "sha256_sorted": hashlib.sha256(repr(sorted(map(repr, rows))).encode()).hexdigest()}
    t0 = time.perf_counter()
    result = scheme_kind(project.label_scheme).agreement(project.label_scheme, rows, agreement)
    report["summaries"] = {"seconds": round(time.perf_counter() - t0, 1), "peak_mb": peak_mb()}
    del rows
    t0 = time.perf_counter()
    result["document_pairs"] = agreement.document_pair_agreement(project)
    report["document_pairs"] = {"seconds": round(time.perf_counter() - t0, 1), "peak_mb": peak_mb()}
    report["result_sha256"] = hashlib.sha256(json.dumps(result, sort_keys=True, default=str).encode()).hexdigest()
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
