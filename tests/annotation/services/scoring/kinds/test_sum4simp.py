"""``sum4simp-filter`` (``scoring/kinds/sum4simp.py``): the Sum4Simp filter fitted on a reference corpus, saved
as a model version and reused, with SARI from an optional corpus of reference simplifications."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from annotation.models import CandidatePair, ModelVersion, Status
from tests import factories
from tests.annotation.services.scoring.helpers import REFERENCE, SIMPLIFICATION, VERB_S, features, parallel, run_job

pytestmark = pytest.mark.django_db


def test_sum4simp_keeps_a_simplification_and_drops_its_reverse(project, reference):
    # shorter, simpler words and more complex-corpus-typical source words than the average reference pair
    simplification, reverse = parallel(project, "target", [SIMPLIFICATION, SIMPLIFICATION[::-1]])
    job = run_job(project, "sum4simp-filter", reference_project=reference.name)
    assert job.status == Status.SUCCEEDED, job.error
    good, bad = features(simplification), features(reverse)
    assert good["sum4simp_keep"] == 1.0 and bad["sum4simp_keep"] == 0.0
    assert good["sum4simp_T"] == 1.0 and bad["sum4simp_T"] < 0.01 and job.result["threshold"] == 0.875
    assert good["sum4simp_len"] == pytest.approx(5 / 12) and bad["sum4simp_len"] == pytest.approx(12 / 5)
    assert job.result["kept"] == 1 and job.result["keep_rate"] == 0.5
    assert job.result["attributes"] == ["comp", "freq", "len"] and job.result["sari"].startswith("left out")


def test_the_sum4simp_fit_is_saved_as_a_model_version_and_can_be_reused(project, reference):
    parallel(project, "target", [("The provincial authorities promulgated ordinances.", "The state made rules.")])
    job = run_job(project, "sum4simp-filter", reference_project=reference.pk)
    mv = ModelVersion.objects.get(pk=job.result["model_version"])
    assert mv.kind == "sum4simp-filter" and mv.project == project
    saved = json.loads(Path(mv.path).read_text())
    assert saved["kind"] == "sum4simp_filter" and set(saved["fits"]) == {"len", "comp", "freq"}
    assert mv.training_snapshot["pairs"] == len(REFERENCE)
    assert saved["fits"]["len"]["mu"] == pytest.approx(np.mean([len(s.split()) / len(c.split()) for c, s in REFERENCE]))
    first = CandidatePair.objects.get(article__title="target").features
    again = run_job(project, "sum4simp-filter", model_version=mv.pk)
    assert again.result["model_version"] == mv.pk and ModelVersion.objects.count() == 1
    assert CandidatePair.objects.get(article__title="target").features == first


def test_sari_uses_reference_simplifications_from_a_refs_project(project, reference, users):
    from workers.engine.simplicity import sentence_sari

    complex_text, simple_text = SIMPLIFICATION
    (pair,) = parallel(project, "target", [SIMPLIFICATION])
    refs = factories.make_project("ACCESS outputs", rita="researcher")  # system outputs used as references
    outputs = [(c, f"The city {VERB_S[i % 5]} it.") for i, (c, _) in enumerate(REFERENCE)]
    parallel(refs, "outputs", outputs + [(complex_text.upper(), "The city passed a law.")])  # matched case-insensitively
    job = run_job(project, "sum4simp-filter", reference_project=reference.pk, refs_project=refs.pk)
    assert job.result["sari"] == "used" and "sari" in job.result["attributes"]
    expected = sentence_sari(complex_text, simple_text, ["The city passed a law."])["sari"]
    assert features(pair)["sum4simp_sari"] == pytest.approx(expected)
    mv = ModelVersion.objects.get(pk=job.result["model_version"])
    assert mv.training_snapshot["pairs_with_refs"] == len(REFERENCE)


def test_a_threshold_given_with_a_saved_fit_replaces_the_fitted_one(project, reference):
    simplification, reverse = parallel(project, "target", [SIMPLIFICATION, SIMPLIFICATION[::-1]])
    fitted = run_job(project, "sum4simp-filter", reference_project=reference.pk)
    lenient = run_job(project, "sum4simp-filter", model_version=fitted.result["model_version"], threshold=0.0)
    assert lenient.result["threshold"] == 0.0 and lenient.result["kept"] == 2
    assert features(reverse)["sum4simp_keep"] == 1.0
    assert json.loads(Path(ModelVersion.objects.get().path).read_text())["threshold"] == 0.875  # the file is unchanged
