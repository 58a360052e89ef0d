"""The value of a link (a sentence pair): the ONE precedence rule that review, curation, export,
training, test questions, model metrics, calibration and the scoring jobs use (SPEC §6, issue 27).

Everything known about a pair — its stored :class:`~annotation.models.Adjudication` (adjudicated
in-house, imported with the corpus, or automatic gold written earlier by
:func:`annotation.services.review.adjudication.auto_gold`) and its **counted** votes
(:func:`annotation.services.review.gold_reading.counted_labels`: no test answers, no excluded
annotators) — decides its value, first match wins (:func:`resolve`):

1. **adjudication** — gold a person decided (provenance ``adjudicated``), and automatic gold
   (``majority`` / ``single``, itself written from the votes), wins over everything;
2. **the annotators' explicit labels**, as the *policy* reads them:

   * ``stored`` — none (only stored gold counts);
   * ``majority`` — the single most frequent value of ≥ 2 votes, provenance ``majority``;
   * ``single`` — the vote of a pair with exactly one vote, provenance ``single``;
   * ``majority-or-single`` — either: every human judgement that is not a tie;

   so an annotator's label refines imported gold of unknown kind (``aligned-or-partial``) and
   never loses to imported gold;
3. **imported gold**, with the meaning it was imported with (``aligned-or-partial`` stays that:
   a link of unknown kind, never read as ``aligned``);
   — but when the votes qualify and tie, the pair is **undecided** (:data:`UNDECIDED`, provenance
   ``tie``), imported gold or not: a disagreement waits in adjudication (issue 34;
   :func:`~annotation.services.review.gold_reading.pair_gold`
   leaves it out unless asked); else it has no value.

The *inputs* of the rule — which votes count, the "not" each completion of a document pair implies,
what imported gold means — are gathered in one place, :mod:`annotation.services.review.gold_reading`,
which every consumer reads (issue 34).

Who uses which policy: automatic gold writes what ``majority`` or ``single`` gives; the gold export
offers ``stored``, ``majority`` and ``majority-or-single``; training, calibration, curation and the
scoring jobs read ``majority-or-single``. A label's *class* (aligned / partial / not) is the scheme
value's ``counts_as`` (:func:`annotation.label_schemes.value_classes`).

Example:
    >>> resolve(None, ["aligned", "aligned", "partial"], "majority")
    Gold(value='aligned', provenance='majority', stored=False, reviewer=None)
    >>> resolve(None, ["aligned"], "majority") is None, resolve(None, ["aligned", "partial"], "majority-or-single").value
    (True, 'undecided')
    >>> resolve(Gold("partial", "adjudicated", stored=True), ["aligned", "aligned"], "majority").value
    'partial'
    >>> resolve(Gold("aligned-or-partial", "imported", stored=True), ["partial"], "majority-or-single").value
    'partial'
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from annotation.models import Adjudication

POLICIES: tuple[str, ...] = ("stored", "majority", "single", "majority-or-single")
UNDECIDED = "undecided"
"""Value (and class) of a pair whose qualifying votes tie and that no adjudication or import decides:
no scheme value; it is never written as aligned, partial or not aligned."""
TIE = "tie"
"""Provenance of an :data:`UNDECIDED` pair."""


@dataclass(frozen=True)
class Gold:
    """A pair's gold: its value, how it was obtained, and whether it is a stored Adjudication row
    (``stored=False``: computed from the counted votes now). ``reviewer`` names who adjudicated
    stored gold, when the caller asked for it (e.g. the export's pseudonym)."""

    value: str
    provenance: str
    stored: bool = False
    reviewer: str | None = None


def _check(policy: str) -> str:
    if policy not in POLICIES:  # a programming error: a policy is an option's declared choice before it gets here
        raise ValueError(f"gold policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    return policy


def majority_value(values: Iterable[str]) -> str | None:
    """The most frequent value when it is the only one with that count (ties: None).

    Example:
        >>> majority_value(["a", "b", "a"]), majority_value(["a", "b"])
        ('a', None)
    """
    ranked = Counter(v for v in values if v).most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def qualifies(votes: int, policy: str) -> bool:
    """Whether ``votes`` counted (non-empty) votes are enough for ``policy`` to decide from them —
    a qualifying pair whose votes then give no gold is a tie."""
    _check(policy)
    return (votes >= 2 and policy in ("majority", "majority-or-single")) or \
        (votes == 1 and policy in ("single", "majority-or-single"))


def vote_gold(values: Iterable[str], policy: str) -> Gold | None:
    """What the counted votes ``values`` give under ``policy`` (None: too few votes, or a tie)."""
    values = [v for v in values if v]
    if not qualifies(len(values), policy):
        return None
    value = majority_value(values)
    if value is None:
        return None
    return Gold(value, Adjudication.MAJORITY if len(values) >= 2 else Adjudication.SINGLE)


def resolve(stored: Gold | None, values: Iterable[str], policy: str) -> Gold | None:
    """A pair's value by the precedence rule (module docstring): adjudicated or automatic gold, else
    what the counted votes ``values`` give under ``policy``, else imported gold, else
    :data:`UNDECIDED` when qualifying votes tie, else None."""
    _check(policy)
    if stored is not None and stored.provenance != Adjudication.IMPORTED:
        return stored
    values = [v for v in values if v]
    voted = vote_gold(values, policy) if policy != "stored" else None
    if voted is not None:
        return voted
    if policy != "stored" and qualifies(len(values), policy):
        return Gold(UNDECIDED, TIE)  # a disagreement, on imported gold too: it waits in adjudication (issue 34)
    return stored


__all__ = ["Gold", "POLICIES", "TIE", "UNDECIDED", "majority_value", "qualifies", "resolve", "vote_gold"]
