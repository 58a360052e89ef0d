"""``access-attributes``: the four ACCESS control attributes (MUSS §3.2) of every pair, stored as
``access_char_ratio``, ``access_lev_sim``, ``access_word_rank_ratio`` and, with a dependency parser for the
project's language, ``access_dep_depth_ratio``."""
from __future__ import annotations

from annotation.models import Job
from annotation.services.projects import model_paths
from annotation.services.projects.language_tools import project_pipeline
from annotation.services.scoring.common import ProgressFn, score_each
from annotation.services.scoring.kinds import ScoringKind, register
from workers.engine import Option

PREFIX = "access_"


def run(job: Job, report: ProgressFn) -> dict:
    from workers.engine import access_attributes, load_parser

    language = job.project.language
    parser = job.params.get("parser", "auto")
    if parser in (None, "", "none"):
        nlp, why = None, "no parser requested"
    else:
        chosen = project_pipeline(job.project) if parser == "auto" else model_paths.resolve(parser, "parser", job.project)
        nlp, why = load_parser(language, chosen)
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
    n = score_each(job, report, score, PREFIX)
    return {"pairs": n, "language": language, "parser": why, "skipped": skipped, "missing_features": skipped,
            "keys": [k for k in ("access_char_ratio", "access_lev_sim", "access_word_rank_ratio",
                                 "access_dep_depth_ratio") if k not in skipped]}


register(ScoringKind(
    "access-attributes", "ACCESS control attributes of every pair of a project or run.", run, order=1,
    options=(Option("parser", "str", None, nullable=True,
                    help="spaCy pipeline for the dependency depth (auto: the project's; none: leave it out)"),),
    task="access_attributes", prefix=PREFIX))
