"""``pivot-select``: the pivot-translation selectors (BLEU ≥ 15, FRES gain ≥ 10) over every pair,
stored as ``pivot_bleu``, ``pivot_fres_complex``, ``pivot_fres_simple``, ``pivot_fres_gain``, ``pivot_swapped``
and ``pivot_keep``."""
from __future__ import annotations

from annotation.models import Job, Project
from annotation.services.scoring.common import ProgressFn, score_each
from annotation.services.scoring.kinds import ScoringKind, register
from workers.engine import H_BLEU, H_FRES, Option

PREFIX = "pivot_"


def run(job: Job, report: ProgressFn) -> dict:
    from workers.engine import pivot_select

    params, language = job.params, job.project.language
    h_bleu, h_fres = float(params.get("h_bleu", H_BLEU)), float(params.get("h_fres", H_FRES))
    orient = bool(params.get("orient", True))
    counts = {"kept": 0, "identical": 0, "low_bleu": 0, "low_fres_gain": 0}

    def score(texts):
        rows = []
        for complex_text, simple_text in texts:
            d = pivot_select(complex_text, simple_text, language=language, h_bleu=h_bleu, h_fres=h_fres, orient=orient)
            counts[d.reason] += 1
            rows.append({"pivot_bleu": d.bleu, "pivot_fres_complex": d.fres_complex,
                         "pivot_fres_simple": d.fres_simple, "pivot_fres_gain": d.fres_gain,
                         "pivot_swapped": float(d.swapped), "pivot_keep": float(d.keep)})
        return rows

    n = score_each(job, report, score, PREFIX)
    return {"pairs": n, "h_bleu": h_bleu, "h_fres": h_fres, "orient": orient, "language": language,
            "counts": counts, "dropped": n - counts["kept"], "pass_rate": round(counts["kept"] / n, 4) if n else 0.0}


def check(project: Project, params: dict) -> None:
    """FRES needs coefficients for the project's language."""
    from annotation.services.scoring.jobs import ScoringRefused
    from workers.engine import FRES_COEFFICIENTS

    if project.language not in FRES_COEFFICIENTS:
        raise ScoringRefused(f"no FRES coefficients for the project's language {project.language!r}; "
                             f"supported: {', '.join(sorted(FRES_COEFFICIENTS))}", code="unsupported_language")


register(ScoringKind(
    "pivot-select", "Pivot-translation BLEU/FRES selectors over every pair.", run, order=5, check=check,
    options=(Option("h_bleu", "float", H_BLEU, min=0.0, max=100.0, help="keep a pair whose BLEU is at least this"),
             Option("h_fres", "float", H_FRES, min=-200.0, max=200.0,
                    help="keep a pair whose FRES gain is at least this"),
             Option("orient", "bool", True, help="swap a pair whose simple side reads harder")),
    task="pivot_select", prefix=PREFIX))
