"""The exported pairs' source (``export.source``), its label classes: the scheme's aligned / partial / not, a tie as
undecided, the model's own labels in an auto export, and the refusal of a gold export without classes."""
from __future__ import annotations

import pytest

from annotation.label_schemes import value_classes
from annotation.models import LabelScheme
from annotation.services.export import source
from annotation.services.export.options import ExportError
from annotation.services.review.gold_rule import UNDECIDED
from tests import factories

pytestmark = pytest.mark.django_db


def test_a_gold_value_counts_as_its_scheme_class_a_tie_as_undecided(project):
    counts_as = value_classes(project.label_scheme)
    assert counts_as["not-aligned"] == "not" and counts_as["partial"] == "partial"
    assert source.class_of("aligned", counts_as) == "aligned"
    assert source.class_of(UNDECIDED, counts_as) == UNDECIDED
    assert source.class_of("something-else", counts_as) == "not"


def test_an_auto_export_keeps_the_models_aligned_and_partial(project):
    counts_as = value_classes(project.label_scheme)
    assert [source.auto_class(v, counts_as) for v in ("partial", "not-aligned", "aligned", "other")] == [
        "partial", "not", "aligned", "not"]
    assert source.auto_class("partial", {}) == "partial"
    assert source.class_values(project, "auto") == {c: c for c in source.CLASS_NAMES}
    assert source.class_values(project, "gold")["not"] == "not-aligned"


def test_a_gold_export_of_a_scheme_without_classes_is_refused(users):
    likert = factories.make_project("Likert", scheme="likert-human-eval", rita="researcher")
    assert LabelScheme.objects.get(slug="likert-human-eval") == likert.label_scheme
    with pytest.raises(ExportError, match="gold export needs a categorical label scheme"):
        source.check_scheme(likert, "gold")
    source.check_scheme(likert, "auto")  # the model's labels need no classes
