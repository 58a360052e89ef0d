"""The gold label of a pair: the one rule that review, export, training, calibration and the
scoring jobs use (SPEC §6).

A pair's gold is its stored :class:`~annotation.models.Adjudication` when it has one (adjudicated
in-house, imported with the corpus, or automatic gold written earlier by
:func:`annotation.services.review.adjudication.auto_gold`). Otherwise — when the *policy* allows —
its **counted** votes (:func:`annotation.services.review.qc.counted_labels`: no test answers, no
excluded annotators) decide:

* ``stored`` — only stored gold;
* ``majority`` — the single most frequent value of ≥ 2 votes (a tie gives none), provenance
  ``majority``;
* ``single`` — the vote of a pair with exactly one vote, provenance ``single``;
* ``majority-or-single`` — either: every human judgement that is not a tie.

Who uses which: automatic gold writes what ``majority`` or ``single`` gives; the gold export offers
``stored``, ``majority`` and ``majority-or-single``; training, calibration and the scoring jobs
read ``majority-or-single``. A label's *class* (aligned / partial / not) is the scheme value's
``counts_as`` (:func:`annotation.label_schemes.value_classes`).

Example:
    >>> resolve(None, ["aligned", "aligned", "partial"], "majority")
    Gold(value='aligned', provenance='majority', stored=False, reviewer=None)
    >>> resolve(None, ["aligned"], "majority") is None, resolve(None, ["aligned", "partial"], "majority-or-single")
    (True, None)
    >>> resolve(Gold("partial", "adjudicated", stored=True), ["aligned", "aligned"], "majority").value
    'partial'
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from annotation.label_schemes import value_classes
from annotation.models import Adjudication, Project
from annotation.services.review import qc

POLICIES: tuple[str, ...] = ("stored", "majority", "single", "majority-or-single")


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
    if policy not in POLICIES:
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
    """A pair's gold: its stored gold, else what its counted votes give under ``policy``."""
    _check(policy)
    return stored if stored is not None else vote_gold(values, policy)


def pair_gold(project: Project, pairs, *, policy: str = "majority-or-single") -> dict[int, Gold]:
    """``{pair id: Gold}`` of the project's ``pairs`` (a queryset or ids) that have gold under
    ``policy``; pairs without any are left out."""
    _check(policy)
    out = {pid: Gold(value, provenance, stored=True) for pid, value, provenance in
           Adjudication.objects.filter(pair__in=pairs).values_list("pair_id", "value", "provenance")}
    if policy == "stored":
        return out
    votes: dict[int, list[str]] = defaultdict(list)
    for pid, value in qc.counted_labels(project).filter(pair__in=pairs).values_list("pair_id", "value"):
        if pid not in out:
            votes[pid].append(value)
    for pid, values in votes.items():
        gold = vote_gold(values, policy)
        if gold is not None:
            out[pid] = gold
    return out


def pair_classes(project: Project, pairs, *, policy: str = "majority-or-single",
                 default: str | None = "not") -> dict[int, str]:
    """``{pair id: class}`` of the pairs with gold under ``policy`` (see :func:`pair_gold`); a gold
    value outside the scheme, or without a class, counts as ``default`` (None: the pair is left out)."""
    classes = value_classes(project.label_scheme, default)
    out = {pid: classes.get(gold.value, default) for pid, gold in pair_gold(project, pairs, policy=policy).items()}
    return {pid: cls for pid, cls in out.items() if cls is not None}


__all__ = ["Gold", "POLICIES", "majority_value", "pair_classes", "pair_gold", "qualifies", "resolve", "vote_gold"]
