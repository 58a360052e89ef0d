"""How each exported pair's label is obtained, and what it says about it (issue: "every exported
gold label says how it was obtained").

Gold export: each pair's value is the one gold reading's
(:mod:`annotation.services.review.gold_reading`, the rule :func:`annotation.services.review.gold_rule.resolve`
over everything that decides it — review, curation, training, run scores and calibration read the same;
nothing is written): adjudicated (or automatic) gold wins, else the votes as the label policy reads
them (counted labels plus the "not aligned" each completion implies on the pairs its completer left
unlinked), a qualifying tie being ``undecided`` (class ``undecided``; written only inside a document
pair complete under the policy, else left out and counted), else imported gold with its meaning
(``aligned-or-partial`` stays that), else no value (left out, counted by reason):

* ``majority-or-single`` (the default: the export keeps the annotators' work) — the single most
  frequent of ≥ 2 votes, provenance ``majority``, and a pair with exactly one vote takes it,
  provenance ``single``;
* ``majority`` — as ``majority-or-single`` without the single votes (an article one annotator
  completed is not complete under it);
* ``stored`` — only stored gold (imported or adjudicated), the votes alone left out.

The preview counts, per policy, where the pairs come from (``breakdown.py``).

Auto export: the model's predicted label, provenance ``model``; the label's class comes from the
scheme when the value is one of its values, else ``aligned``/``partial`` stand for themselves and
anything else counts as ``not``.
"""
from __future__ import annotations

from annotation.label_schemes import UNKNOWN_KIND, scheme_kind, value_classes
from annotation.label_schemes import class_values as first_values
from annotation.models import Project
from annotation.services.export.options import ExportError
from annotation.services.review.gold_rule import UNDECIDED

CLASS_NAMES = ("aligned", "partial", "not")
UNLABELLED_CLASSES = (UNKNOWN_KIND, UNDECIDED)
"""Classes that say less than aligned / partial / not: a link of unknown kind and an undecided tie.
A format that can only say aligned / partialAligned / notAligned leaves them out (and counts them)."""


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


def class_of(value: str, counts_as: dict[str, str]) -> str:
    """The class of a gold value: its scheme class, :data:`UNDECIDED` for a tie, else ``not``."""
    return UNDECIDED if value == UNDECIDED else counts_as.get(value, "not")
