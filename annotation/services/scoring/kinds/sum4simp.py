"""``sum4simp-filter``: the Sum4Simp simplicity filter, fitted on a reference project (its imported pairs, e.g. a
WikiLarge ``.src/.dst`` import) and saved as a ``ModelVersion`` (JSON under ``MODEL_ROOT``); stores
``sum4simp_<attribute>``, ``sum4simp_t_<attribute>``, ``sum4simp_T`` and ``sum4simp_keep`` (1.0/0.0) on every pair.

SARI references: the paper uses the outputs of a simplification model (ACCESS trained on WikiLarge) on the
source sentences as references. Here they come from an optional ``refs_project``: an imported pair corpus
whose complex sides are source sentences and whose simple sides are their reference simplifications
(matched by complex text after ``workers.engine.text.normalise``, punctuation kept). The pairs' own simple
sides are *not* used: SARI of a target against itself is maximal for every pair, so the fit would be
degenerate. Without references the SARI attribute is left out and T is rescaled over the other three (see
:mod:`workers.engine.simplicity.sum4simp_filter`)."""
from __future__ import annotations

from annotation.models import Job, ModelVersion
from annotation.services.scoring import common
from annotation.services.scoring.kinds import ProjectRef, ScoringKind, register
from workers.engine import SUM4SIMP_DEFAULT_THRESHOLD, Option

PREFIX = "sum4simp_"


def run(job: Job, report: common.ProgressFn) -> dict:
    from workers.engine import Sum4SimpFilter, TextPair

    params, language = job.params, job.project.language
    refs = common.reference_simplifications(params.get("refs_project"))
    if params.get("model_version"):
        mv = ModelVersion.objects.get(pk=params["model_version"])
        flt = Sum4SimpFilter.load(mv.path)
        if "threshold" in params:
            flt.threshold = float(params["threshold"])
    else:
        report(0.02, "sum4simp-filter: loading the reference corpus")
        reference = [TextPair(c, s, tuple(refs.get(common.reference_key(c), ())))
                     for c, s in common.reference_texts(params["reference_project"])]
        threshold = float(params.get("threshold", SUM4SIMP_DEFAULT_THRESHOLD))
        flt = Sum4SimpFilter.fit(reference, language=language, threshold=threshold)
        path = common.model_dir("sum4simp-filter", job).with_suffix(".json")
        flt.save(path)
        mv = common.save_model_version(
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
            references = refs.get(common.reference_key(complex_text), ())
            values = flt.score_pair(complex_sentences, " ".join(simple_sentences), references)
            keep = values.pop("keep")
            kept += int(keep)
            rows.append({**{f"sum4simp_{k}": v for k, v in values.items()}, "sum4simp_keep": keep})
        return rows

    n = common.score_each(job, report, score, PREFIX, sentences=True)
    return {"pairs": n, "kept": kept, "keep_rate": round(kept / n, 4) if n else 0.0, "model_version": mv.pk,
            "threshold": flt.threshold, "attributes": sorted(flt.fits),
            "sari": "used" if "sari" in flt.fits else "left out: no reference simplifications (refs_project)",
            "missing_features": {} if "sari" in flt.fits else {
                "sum4simp_sari": "no reference simplifications (refs_project); T rescaled over the other attributes"}}


register(ScoringKind(
    "sum4simp-filter", "Fit the Sum4Simp filter on a reference corpus, then score pairs.", run, order=2,
    needs_reference=True, task="sum4simp_filter", prefix=PREFIX,
    options=(ProjectRef("refs_project", "str", None, nullable=True,
                        help="imported corpus of reference simplifications for SARI (name or id)"),
             Option("threshold", "float", None, min=0.0, max=1.0, nullable=True,
                    help=f"keep a pair whose T is at least this (default {SUM4SIMP_DEFAULT_THRESHOLD:g})"))))
