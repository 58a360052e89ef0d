"""How each exported pair's label is obtained, and what it says about it (issue: "every exported
gold label says how it was obtained").

Gold export: a pair's stored :class:`~annotation.models.Adjudication` wins, with its provenance
(``adjudicated`` in-house, ``majority`` or ``single`` written by the review area's automatic gold,
``imported`` with the corpus). Pairs without one are exported only when the label policy says so,
computed on the fly from the *counted* votes (``qc.counted_labels``: no test answers, no excluded
annotators) by :func:`annotation.services.review.gold.resolve`, the rule automatic gold, training
and calibration use too (nothing is written):

* ``majority-or-single`` (the default: the export keeps the annotators' work) — else the single most
  frequent of ≥ 2 votes (ties are left out), provenance ``majority``, and a pair with exactly one vote
  takes it, provenance ``single``;
* ``majority`` — as ``majority-or-single`` without the single votes;
* ``stored`` — only stored gold.

The preview counts, per policy, where the pairs come from (``breakdown.py``).

Auto export: the model's predicted label, provenance ``model``; the label's class comes from the
scheme when the value is one of its values, else ``aligned``/``partial`` stand for themselves and
anything else counts as ``not``.
"""
from __future__ import annotations

from annotation.label_schemes import class_values as first_values
from annotation.label_schemes import scheme_kind, value_classes
from annotation.models import Project
from annotation.services.export.options import ExportError

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
    scheme = scheme_kind(project.label_scheme)
    if kind == "gold" and not scheme.gold:
        raise ExportError(f"gold export needs a categorical label scheme; {scheme.why_no_gold}")


def auto_class(label: str, counts_as: dict[str, str]) -> str:
    if label in counts_as:
        return counts_as[label]
    return label if label in ("aligned", "partial") else "not"
