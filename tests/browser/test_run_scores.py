"""Issue 28 §3: the compare page shows two runs' scores against exhaustive gold side by side, with the
number of articles and the "too few to trust" rule (values: ``scores_data.py``)."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun
from tests import factories
from tests.annotation.services.training.scores_data import scored_project
from tests.browser.conftest import login, screenshot

pytestmark = pytest.mark.browser


def test_the_compare_page_shows_both_runs_scores_side_by_side(page, transactional_db):
    factories.make_user("rita", researcher=True)
    anna = factories.make_user("anna")
    project = factories.make_project("Scores", rita="researcher", anna="annotator")
    new = scored_project(project, anna)["run"]
    old = AlignmentRun.objects.create(project=project, method="tfidf", status="succeeded")  # linked nothing
    login(page, "rita", "pw-rita")
    page.goto(f"/projects/{project.pk}/runs/compare/?old={old.pk}&new={new.pk}")
    page.wait_for_function("() => document.querySelectorAll('#scores-table tbody tr').length === 2")
    rows = [page.locator(f"#scores-table tbody tr[data-run={side}] td").all_inner_texts() for side in ("old", "new")]
    assert rows[0] == [f"Old #{old.pk} tfidf", "0.000", "0.000", "0.000", "0.000", "0.000", "0.000", "2 (too few to trust)"]
    assert rows[1] == [f"New #{new.pk} jaccard", "0.667", "1.000", "0.800", "0.250", "0.500", "0.333", "2 (too few to trust)"]
    note = page.inner_text("#scores-note")
    assert "too few to trust (fewer than 5)" in note and "false positive" in note and "identical sentence pairs" in note
    screenshot(page, "compare-run-scores")
