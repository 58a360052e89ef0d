"""How each exported pair's label is obtained, and what it says about it (issue: "every exported
gold label says how it was obtained").

Gold export: a pair's stored :class:`~annotation.models.Adjudication` wins, with its provenance
(``adjudicated`` in-house, ``majority`` or ``single`` written by the review area's automatic gold,
``imported`` with the corpus). Pairs without one are exported only when the label policy says so,
computed on the fly from the *counted* votes (``qc.counted_labels``: no test answers, no excluded
annotators) by :func:`annotation.services.review.gold.resolve`, the rule automatic gold, training
and calibration use too (nothing is written):

* ``stored`` — only stored gold;
* ``majority`` — else the single most frequent of ≥ 2 votes (ties are left out), provenance ``majority``;
* ``majority-or-single`` — as ``majority``, and a pair with exactly one vote takes it, provenance ``single``.

Auto export: the model's predicted label, provenance ``model``; the label's class comes from the
scheme when the value is one of its values, else ``aligned``/``partial`` stand for themselves and
anything else counts as ``not``.
"""
from __future__ import annotations

from annotation.models import LabelScheme, Project
from annotation.services.export.options import ExportError
from annotation.services.review.gold import class_values as first_values
from annotation.services.review.gold import value_classes

CLASS_NAMES = ("aligned", "partial", "not")


def counts_as_map(project: Project) -> dict[str, str]:
    """Scheme value → class (aligned / partial / not)."""
    return value_classes(project.label_scheme)


def class_values(project: Project, kind: str) -> dict[str, str]:
    """Class → the label written for derived pairs of that class."""
    if kind == "auto":
        return {c: c for c in CLASS_NAMES}
    return first_values(project.label_scheme)


def check_scheme(project: Project, kind: str) -> None:
    if kind == "gold" and project.label_scheme.kind == LabelScheme.LIKERT:
        raise ExportError("gold export needs a categorical label scheme; this project rates on Likert scales")


def auto_class(label: str, counts_as: dict[str, str]) -> str:
    if label in counts_as:
        return counts_as[label]
    return label if label in ("aligned", "partial") else "not"
