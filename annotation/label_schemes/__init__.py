"""Label schemes: the four built into every installation (SPEC §6) and the registry of scheme *kinds*.

``counts_as`` maps each value onto the CRF paper's three classes so that agreement, evaluation and
training work the same whichever scheme a project labels with.

A scheme's ``kind`` says how a label is given and what can be computed from it: ``categorical``
(``classes.py``: one value per pair, gold, adjudication) and ``likert`` (``likert.py``: a point per
dimension). Each kind is one module in this package holding a :class:`SchemeKind` subclass decorated
with ``@register``: its validation of a value/ratings, how a label is shown, its agreement
statistics, its label counts, whether a pair gets a gold value, and the JSON description the pages'
scripts read (:meth:`SchemeKind.page_data`). Services, views and templates ask :func:`scheme_kind`
instead of comparing kind names, so adding a kind is adding a file (and its tests).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from annotation.plugins import Registry
from annotation.validation import text_problem

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from annotation.models import LabelScheme

def _categorical(slug: str, name: str, *values: tuple[str, str, str]) -> dict[str, object]:
    """A built-in categorical scheme: ``(value, name, counts_as)`` per value, keyed 1, 2, ... in order."""
    return {"slug": slug, "name": name, "kind": "categorical",
            "values": [{"value": v, "name": n, "key": str(i), "counts_as": c} for i, (v, n, c) in enumerate(values, 1)]}


BUILTIN_SCHEMES: list[dict[str, object]] = [
    _categorical("aligned-partial-not", "aligned / partial / not-aligned (neural CRF paper)",
                 ("aligned", "Aligned", "aligned"), ("partial", "Partially aligned", "partial"),
                 ("not-aligned", "Not aligned", "not")),
    _categorical("sum4simp-quality", "Good / Good partial / Partial / Bad (Sum4Simp)",
                 ("good", "Good", "aligned"), ("good-partial", "Good partial", "partial"),
                 ("partial", "Partial", "partial"), ("bad", "Bad", "not")),
    _categorical("wivico-validity", "valid / partially valid / non-valid (WIVICO)",
                 ("valid", "Valid", "aligned"), ("partially-valid", "Partially valid", "partial"),
                 ("non-valid", "Non-valid", "not")),
    {
        "slug": "likert-human-eval",
        "name": "Likert 1–5: simplicity, adequacy, fluency",
        "kind": "likert",
        "values": [{"value": str(i), "name": str(i), "key": str(i)} for i in range(1, 6)],
        "dimensions": ["simplicity", "adequacy", "fluency"],
    },
]

DEFAULT_SCHEME = "aligned-partial-not"

UNKNOWN_KIND = "aligned-or-partial"
"""Gold value *and* class of a link known to be true whose kind nobody gave (issue 18 §3: a sparse
imported ``gold`` link without ``gold_labels``): a Task 1 positive (aligned vs not) without a Task 2
class (aligned vs partial). It is no scheme value; :func:`value_classes` maps it to itself so that no
reader takes it for "not" (the default of an unknown value), and readers that need a class of Task 2
leave it out."""
POSITIVE_CLASSES = ("aligned", "partial", UNKNOWN_KIND)
"""The classes that are a Task 1 positive (a link)."""


def value_classes(scheme: LabelScheme, default: str | None = "not") -> dict[str, str | None]:
    """Scheme value → its class (``counts_as``: aligned / partial / not), ``default`` for a value
    that names none; :data:`UNKNOWN_KIND` (imported gold of unknown kind) → itself."""
    out = {v["value"]: v.get("counts_as", default) for v in scheme.values}
    out.setdefault(UNKNOWN_KIND, UNKNOWN_KIND)
    return out


def class_values(scheme: LabelScheme) -> dict[str, str]:
    """Class → the first scheme value that counts as it (a value naming no class counts as ``not``):
    how a class decided elsewhere (an article link, imported or derived gold) is stored as a label.

    Example:
        >>> from annotation.models import LabelScheme
        >>> class_values(LabelScheme(values=[{"value": "good", "counts_as": "aligned"}, {"value": "bad"},
        ...                                  {"value": "fine", "counts_as": "aligned"}]))
        {'aligned': 'good', 'not': 'bad'}
    """
    out: dict[str, str] = {}
    for v in scheme.values:
        out.setdefault(v.get("counts_as", "not"), v["value"])
    return out


# --- Scheme kinds ---------------------------------------------------------------------------------

class InvalidValue(ValueError):
    """A label's value or ratings do not fit its scheme (the message names the field and why)."""


def checked_text(name: str, value: Any, limit: int) -> str:
    """``value`` if it is a string both databases store faithfully and at most ``limit`` long."""
    if not isinstance(value, str):
        raise InvalidValue(f"{name}: must be a string")
    problem = text_problem(value)
    if problem:
        raise InvalidValue(f"{name}: {problem}")
    if len(value) > limit:
        raise InvalidValue(f"{name}: at most {limit} characters (got {len(value)})")
    return value


class SchemeKind:
    """What one kind of label scheme decides. Subclasses live one per module in this package.

    Attributes:
        name: the stored ``LabelScheme.kind``.
        label: how pages name the kind.
        gold: whether a pair's votes settle into one gold value (adjudication, automatic gold, gold
            export, calibration, hidden test questions, imported gold, article links).
        why_no_gold: for a kind without gold, why (shown where gold is asked for).
        vote_field: the ``Label`` field that holds the vote (``value`` or ``ratings``).
        ordinal: whether agreement is also reported ordinal (weighted κ, α ordinal and interval).
        widget: how the labelling pages ask for a label (``choices``: one value; ``ratings``: a point
            per dimension); the scripts read it from :meth:`page_data`.
        value_chars: the longest value a label may hold (at most ``Label.value``'s 50).
        comment_chars: the longest free-text comment on a label.
    """

    name: str = ""
    label: str = ""
    gold: bool = True
    why_no_gold: str = ""
    vote_field: str = "value"
    ordinal: bool = False
    widget: str = "choices"
    value_chars: int = 50
    comment_chars: int = 5000

    def validate(self, scheme: LabelScheme, value: str, ratings: dict) -> dict:
        """The ratings to store once ``value`` / ``ratings`` (a dict) are valid; raises :class:`InvalidValue`."""
        raise NotImplementedError

    def describe(self, scheme: LabelScheme | None, value: str, ratings: Mapping | None) -> str:
        """One label as text (history, conflicts, lists)."""
        raise NotImplementedError

    def agreement(self, scheme: LabelScheme, rows: list[tuple], stats: Any) -> dict:
        """Agreement summaries of counted ``rows`` ``(pair, annotator, value, ratings)``; ``stats`` is the
        statistics module (``services.review.agreement``), passed in so this low layer imports no service."""
        raise NotImplementedError

    def agreement_rows(self, result: dict) -> list[tuple[str, dict]]:
        """The summaries of :meth:`agreement` as titled rows for the dashboard."""
        raise NotImplementedError

    def label_counts(self, scheme: LabelScheme, counted: QuerySet, gold: dict[str, int]) -> dict:
        """Counted votes (a ``Label`` queryset) and gold (value → pairs) per scheme value, for the dashboard."""
        raise NotImplementedError

    def page_data(self, scheme: LabelScheme) -> dict:
        """What the pages' scripts need to ask for and show a label (JSON)."""
        return {"kind": self.name, "widget": self.widget, "gold": self.gold,
                "values": [{"value": v["value"], "name": v.get("name", v["value"]), "key": str(v.get("key", ""))}
                           for v in scheme.values],
                "dimensions": list(scheme.dimensions or [])}


_KINDS: Registry[SchemeKind] = Registry("label-scheme kind", __name__, __path__, identity=type)


def register(cls: type[SchemeKind]) -> type[SchemeKind]:
    """Class decorator adding a scheme kind under its ``name``."""
    _KINDS.add(cls.name, cls())
    return cls


unregister = _KINDS.remove  # tests that register a kind of their own
kinds = _KINDS.entries  # every registered kind, by name


def scheme_kind(scheme: LabelScheme | str) -> SchemeKind:
    """The kind of ``scheme`` (or the kind called so); UnknownName (a KeyError) for an unknown kind."""
    return _KINDS.get(scheme if isinstance(scheme, str) else scheme.kind)
