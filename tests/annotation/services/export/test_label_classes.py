"""An exported label's class (``export.label_classes``): the scheme's aligned / partial / not, a tie as
undecided, the model's own labels in an auto export, and the refusal of a gold export without classes."""
from __future__ import annotations

import pytest

from annotation.models import LabelScheme
from annotation.services.export import label_classes
from annotation.services.export.options import ExportError
from annotation.services.review.gold_rule import UNDECIDED
from tests import factories

pytestmark = pytest.mark.django_db


def test_a_gold_value_counts_as_its_scheme_class_a_tie_as_undecided(project):
    counts_as = label_classes.counts_as_map(project)
    assert counts_as["not-aligned"] == "not" and counts_as["partial"] == "partial"
    assert label_classes.class_of("aligned", counts_as) == "aligned"
    assert label_classes.class_of(UNDECIDED, counts_as) == UNDECIDED
    assert label_classes.class_of("something-else", counts_as) == "not"


def test_an_auto_export_keeps_the_models_aligned_and_partial(project):
    counts_as = label_classes.counts_as_map(project)
    assert [label_classes.auto_class(v, counts_as) for v in ("partial", "not-aligned", "aligned", "other")] == [
        "partial", "not", "aligned", "not"]
    assert label_classes.auto_class("partial", {}) == "partial"
    assert label_classes.class_values(project, "auto") == {c: c for c in label_classes.CLASS_NAMES}
    assert label_classes.class_values(project, "gold")["not"] == "not-aligned"


def test_a_gold_export_of_a_scheme_without_classes_is_refused(users):
    likert = factories.make_project("Likert", scheme="likert-human-eval", rita="researcher")
    assert LabelScheme.objects.get(slug="likert-human-eval") == likert.label_scheme
    with pytest.raises(ExportError, match="gold export needs a categorical label scheme"):
        label_classes.check_scheme(likert, "gold")
    label_classes.check_scheme(likert, "auto")  # the model's labels need no classes
