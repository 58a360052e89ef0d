"""``pivot-select``: the pivot-translation selectors (BLEU ≥ 15, FRES gain ≥ 10) over every pair (see :mod:`.jobs`)."""
from __future__ import annotations

from annotation.models import Job
from annotation.services.scoring.common import PREFIXES, ProgressFn, score_each


def pivot_job(job: Job, report: ProgressFn) -> dict:
    from workers.engine import H_BLEU, H_FRES, pivot_select

    params, language = job.params, job.project.language
    h_bleu, h_fres = float(params.get("h_bleu", H_BLEU)), float(params.get("h_fres", H_FRES))
    orient = bool(params.get("orient", True))
    counts = {"kept": 0, "identical": 0, "low_bleu": 0, "low_fres_gain": 0}

    def score(texts):
        rows = []
        for complex_text, simple_text in texts:
            d = pivot_select(complex_text, simple_text, language=language, h_bleu=h_bleu, h_fres=h_fres, orient=orient)
            counts[d.reason] += 1
            rows.append({"pivot_bleu": d.bleu, "pivot_fres_complex": d.fres_complex, "pivot_fres_simple": d.fres_simple,
                         "pivot_fres_gain": d.fres_gain, "pivot_swapped": float(d.swapped), "pivot_keep": float(d.keep)})
        return rows

    n = score_each(job, report, score, PREFIXES[job.kind])
    return {"pairs": n, "h_bleu": h_bleu, "h_fres": h_fres, "orient": orient, "language": language,
            "counts": counts, "dropped": n - counts["kept"], "pass_rate": round(counts["kept"] / n, 4) if n else 0.0}
