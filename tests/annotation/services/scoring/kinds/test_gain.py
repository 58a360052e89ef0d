"""``gain-classifier`` (``scoring/kinds/gain.py``): WIVICO's simplicity-gain classifier trained on a reference
corpus (its pairs against their swaps), saved as a model version and applied from it."""
from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import ModelVersion, Status
from tests.annotation.services.scoring.helpers import REFERENCE, features, parallel, run_job

pytestmark = pytest.mark.django_db


def test_the_gain_classifier_prefers_a_simplification_to_its_reverse(project, reference):
    simplification, reverse = parallel(project, "target", [
        ("The regional council formally approved the extensive fisheries legislation after lengthy negotiations.",
         "The council passed fishing laws."),
        ("The council passed fishing laws.",
         "The regional council formally approved the extensive fisheries legislation after lengthy negotiations."),
    ])  # unseen words: the classifier must generalise from the gains (length, words, CEFR), not the vocabulary
    job = run_job(project, "gain-classifier", reference_project=reference.pk, epochs=30, parser=None)
    assert job.status == Status.SUCCEEDED, job.error
    assert features(simplification)["gain_prob"] > 0.5 > features(reverse)["gain_prob"]
    counts = job.result["cutoff_counts"]
    assert set(counts["all"]) == {"0.5", "0.6", "0.7", "0.8", "0.9"} and counts["all"]["0.5"] == 1
    assert counts["groups"]["1:1"] == counts["all"]
    mv = ModelVersion.objects.get(pk=job.result["model_version"])
    assert mv.kind == "gain-classifier" and (Path(mv.path) / "model.pt").exists()
    assert mv.metrics["n_pairs"] == len(REFERENCE)
    # without a parser, WIVICO's syntactic gain features are listed as missing, not silently dropped
    assert "gain_classifier:mdt" in job.result["missing_features"]
    assert "no dependency parser" in job.result["missing_features"]["gain_classifier:mdt"]
    # applied from the saved model version: nothing is trained again and the same probabilities come back
    first = features(simplification)["gain_prob"]
    again = run_job(project, "gain-classifier", model_version=mv.pk, parser=None)
    assert again.status == Status.SUCCEEDED, again.error
    assert again.result["model_version"] == mv.pk and ModelVersion.objects.count() == 1
    assert features(simplification)["gain_prob"] == pytest.approx(first)
