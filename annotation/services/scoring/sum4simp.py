"""``sum4simp-filter``: the Sum4Simp simplicity filter, fitted on a reference project (see :mod:`.jobs`)."""
from __future__ import annotations

from annotation.models import Job, ModelVersion
from annotation.services.scoring.common import (
    PREFIXES,
    ProgressFn,
    model_dir,
    reference_key,
    reference_simplifications,
    reference_texts,
    save_model_version,
    score_each,
)


def sum4simp_job(job: Job, report: ProgressFn) -> dict:
    from workers.engine import SUM4SIMP_DEFAULT_THRESHOLD as DEFAULT_THRESHOLD
    from workers.engine import Sum4SimpFilter, TextPair

    params, language = job.params, job.project.language
    refs = reference_simplifications(params.get("refs_project"))
    if params.get("model_version"):
        mv = ModelVersion.objects.get(pk=params["model_version"])
        flt = Sum4SimpFilter.load(mv.path)
        if "threshold" in params:
            flt.threshold = float(params["threshold"])
    else:
        report(0.02, "sum4simp-filter: loading the reference corpus")
        reference = [TextPair(c, s, tuple(refs.get(reference_key(c), ()))) for c, s in reference_texts(params["reference_project"])]
        flt = Sum4SimpFilter.fit(reference, language=language, threshold=float(params.get("threshold", DEFAULT_THRESHOLD)))
        path = model_dir("sum4simp-filter", job).with_suffix(".json")
        flt.save(path)
        mv = save_model_version(
            job, "sum4simp-filter", path,
            {"reference_project": params["reference_project"], "refs_project": params.get("refs_project"),
             "pairs": len(reference), "pairs_with_refs": sum(1 for p in reference if p.refs), "language": language},
            {"fits": {k: {"mu": v.mu, "sigma": v.sigma, "n": v.n} for k, v in flt.fits.items()},
             "threshold": flt.threshold},
        )
    kept = 0

    def score(sentences):
        nonlocal kept
        rows = []
        for complex_sentences, simple_sentences in sentences:
            # an n:1 pair's source is its stitched sentences: §3.2's length uses their average length
            complex_text = " ".join(complex_sentences)
            references = refs.get(reference_key(complex_text), ())
            values = flt.score_pair(complex_sentences, " ".join(simple_sentences), references)
            keep = values.pop("keep")
            kept += int(keep)
            rows.append({**{f"sum4simp_{k}": v for k, v in values.items()}, "sum4simp_keep": keep})
        return rows

    n = score_each(job, report, score, PREFIXES[job.kind], sentences=True)
    return {"pairs": n, "kept": kept, "keep_rate": round(kept / n, 4) if n else 0.0, "model_version": mv.pk,
            "threshold": flt.threshold, "attributes": sorted(flt.fits),
            "sari": "used" if "sari" in flt.fits else "left out: no reference simplifications (refs_project)",
            "missing_features": {} if "sari" in flt.fits else {
                "sum4simp_sari": "no reference simplifications (refs_project); T rescaled over the other attributes"}}
