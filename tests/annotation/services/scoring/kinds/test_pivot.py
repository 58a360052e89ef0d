"""``pivot-select`` (``scoring/kinds/pivot.py``): the pivot-translation selectors (BLEU, FRES gain, orientation)
over every pair, their parameters, and the language check."""
from __future__ import annotations

import pytest

from annotation.models import Status
from annotation.services.scoring import jobs as scoring
from tests import factories
from tests.annotation.services.scoring.helpers import features, parallel, run_job, start

pytestmark = pytest.mark.django_db


def test_the_pivot_selector_keeps_exactly_the_simpler_paraphrase(project):
    kept, same, unrelated, not_simpler = parallel(project, "pivot", [
        ("The feline reposed upon the rug.", "The cat lay on the rug."),  # BLEU ok, FRES gain 42 → kept
        ("The cat lay on the rug.", "The cat lay on the rug."),  # identical → dropped
        ("The feline reposed upon the rug.", "Stock markets fell sharply in Asia."),  # BLEU ≈ 0
        ("The cat lay on the rug all day.", "The cat lay on the rug."),  # BLEU 75, FRES gain 2 < 10
    ])
    job = run_job(project, "pivot-select")
    assert job.result["counts"] == {"kept": 1, "identical": 1, "low_bleu": 1, "low_fres_gain": 1}
    assert job.result["dropped"] == 3 and job.result["pass_rate"] == 0.25
    assert [features(p)["pivot_keep"] for p in (kept, same, unrelated, not_simpler)] == [1.0, 0.0, 0.0, 0.0]
    f = features(kept)
    assert f["pivot_bleu"] >= 15 and f["pivot_fres_gain"] == pytest.approx(42.3, abs=0.1) and f["pivot_swapped"] == 0.0
    assert f["pivot_fres_gain"] == pytest.approx(f["pivot_fres_simple"] - f["pivot_fres_complex"])


def test_the_pivot_selector_orients_a_pair_whose_source_is_the_simpler_side(project):
    (pair,) = parallel(project, "pivot", [("The cat lay on the rug.", "The feline reposed upon the rug.")])
    job = run_job(project, "pivot-select")
    assert features(pair)["pivot_swapped"] == 1.0 and features(pair)["pivot_keep"] == 1.0
    strict = run_job(project, "pivot-select", orient=False)
    assert strict.result["counts"]["low_fres_gain"] == 1 and features(pair)["pivot_keep"] == 0.0
    assert job.result["counts"]["kept"] == 1


def test_pivot_thresholds_are_parameters(project):
    (pair,) = parallel(project, "pivot", [("The feline reposed upon the rug.", "The cat lay on the rug.")])
    job = run_job(project, "pivot-select", h_fres=50)
    assert job.result["counts"] == {"kept": 0, "identical": 0, "low_bleu": 0, "low_fres_gain": 1}


def test_a_project_without_pairs_has_a_pass_rate_of_zero(project):
    job = run_job(project, "pivot-select")
    assert job.status == Status.SUCCEEDED, job.error
    assert job.result["pairs"] == 0 and job.result["pass_rate"] == 0.0 and job.result["dropped"] == 0


def test_pivot_selection_needs_fres_coefficients_for_the_language(users):
    italian = factories.make_project("Italiano", language="it")
    with pytest.raises(scoring.ScoringRefused, match="no FRES coefficients") as info:
        start(italian, "pivot-select", {})
    assert info.value.code == "unsupported_language" and "supported: de, en" in str(info.value)
