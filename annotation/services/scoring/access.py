"""``access-attributes``: the four ACCESS control attributes (MUSS §3.2) of every pair (see :mod:`.jobs`)."""
from __future__ import annotations

from annotation.models import Job
from annotation.services.projects import model_paths
from annotation.services.projects.language_tools import project_pipeline
from annotation.services.scoring.common import PREFIXES, ProgressFn, score_each


def access_job(job: Job, report: ProgressFn) -> dict:
    from workers.engine import access_attributes, load_parser

    language = job.project.language
    parser = job.params.get("parser", "auto")
    nlp, why = (None, "no parser requested") if parser in (None, "", "none") else load_parser(
        language, project_pipeline(job.project) if parser == "auto" else model_paths.resolve(parser, "parser", job.project))
    skipped: dict[str, str] = {}

    def score(texts):
        rows = []
        for complex_text, simple_text in texts:
            attrs, missing = access_attributes(complex_text, simple_text, language, parser=nlp)
            skipped.update({f"access_{k}": reason if nlp is not None else f"no dependency parser ({why})"
                            for k, reason in missing.items()})
            rows.append({f"access_{k}": v for k, v in attrs.items()})
        return rows

    report(0.05, "access-attributes: parser " + ("loaded" if nlp is not None else "unavailable"))
    n = score_each(job, report, score, PREFIXES[job.kind])
    return {"pairs": n, "language": language, "parser": why, "skipped": skipped, "missing_features": skipped,
            "keys": [k for k in ("access_char_ratio", "access_lev_sim", "access_word_rank_ratio",
                                 "access_dep_depth_ratio") if k not in skipped]}
