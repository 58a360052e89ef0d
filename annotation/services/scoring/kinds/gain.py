"""``gain-classifier``: WIVICO's simplicity-gain FFNN, trained on a reference project (positives = its pairs,
negatives = the same pairs swapped) and saved as a ``ModelVersion`` (torch file under ``MODEL_ROOT``); stores
``gain_prob`` on every pair and reports counts per cut-off 0.5…0.9."""
from __future__ import annotations

from annotation.models import Job, ModelVersion
from annotation.services.projects import model_paths
from annotation.services.projects.language_tools import project_pipeline
from annotation.services.scoring import common
from annotation.services.scoring.kinds import ScoringKind, register
from workers.engine import Option

PREFIX = "gain_"


def run(job: Job, report: common.ProgressFn) -> dict:
    from workers.engine import GainClassifier, GainFeaturizer, cutoff_counts

    params, language = job.params, job.project.language
    parser = params.get("parser", "auto")
    if parser == "auto":
        parser = project_pipeline(job.project) or "auto"  # the project's spaCy pipeline, name or path
    elif parser not in (None, "", "none"):
        parser = model_paths.resolve(parser, "parser", job.project)  # checked again: a link may have changed
    featurizer = GainFeaturizer(language, parser=None if parser in (None, "", "none") else parser)
    if params.get("model_version"):
        mv = ModelVersion.objects.get(pk=params["model_version"])
        clf = GainClassifier.load(mv.path, featurizer)
    else:
        report(0.02, "gain-classifier: loading the reference corpus")
        reference = common.reference_texts(params["reference_project"])
        report(0.05, f"gain-classifier: training on {len(reference)} reference pairs and their swaps")
        clf = GainClassifier.train(reference, featurizer=featurizer, language=language,
                                   epochs=int(params.get("epochs", 50)), seed=int(params.get("seed", 0)))
        path = common.model_dir("gain-classifier", job)
        clf.save(path)
        mv = common.save_model_version(
            job, "gain-classifier", path,
            {"reference_project": params["reference_project"], "pairs": len(reference), "language": language,
             "features": list(clf.feature_names), "skipped_features": clf.skipped},
            clf.metrics,
        )
    def score(texts):
        values = clf.predict_proba(texts).tolist() if texts else []
        return [{"gain_prob": p} for p in values]

    n = common.score_each(job, report, score, PREFIX)
    probs, shapes = [], []
    for c, s, features in common.target_pairs(job.project, params).values_list("complex_key", "simple_key", "features"):
        if "gain_prob" in (features or {}):
            probs.append(features["gain_prob"])
            shapes.append(f"{c.count(',') + 1}:{s.count(',') + 1}")
    counts = cutoff_counts(probs, shapes)
    return {"pairs": n, "model_version": mv.pk, "features": list(clf.feature_names), "metrics": clf.metrics,
            "cutoff_counts": counts, "parser": featurizer.parser_info,
            "missing_features": {f"gain_classifier:{k}": why for k, why in sorted(clf.skipped.items())}}


register(ScoringKind(
    "gain-classifier", "Train or apply the WIVICO simplicity-gain classifier.", run, order=4,
    needs_reference=True, queue="gpu", task="gain_classifier", prefix=PREFIX,
    options=(Option("epochs", "int", 50, min=1, max=1000, help="training epochs"),
             Option("parser", "str", None, nullable=True,
                    help="spaCy pipeline for the syntactic features (auto: the project's; none: leave them out)"),
             Option("seed", "int", 0, help="random seed of the training"))))
