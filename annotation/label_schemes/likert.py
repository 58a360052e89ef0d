"""The ``likert`` kind: a point of the scheme's scale (its values, 1–5) for each of its dimensions
(simplicity, adequacy, fluency).

Votes are ``ratings`` (dimension → point); ratings are averaged, never settled into gold, so pairs
get no adjudication, gold export or hidden test questions. Agreement is computed per dimension,
ordinal (weighted κ, α ordinal and interval).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from annotation.label_schemes import InvalidValue, SchemeKind, checked_text, register

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from annotation.models import LabelScheme

RANGE = (1, 5)


def _point(dimension: str, raw: Any, allowed: set[str]) -> str:
    if isinstance(raw, bool):
        raise InvalidValue(f"ratings.{dimension}: must be an integer from {RANGE[0]} to {RANGE[1]}")
    if isinstance(raw, float) and raw.is_integer():
        raw = int(raw)
    if isinstance(raw, str):
        raw = checked_text(f"ratings.{dimension}", raw, 8).strip()
    text = str(raw)
    if text not in allowed:
        raise InvalidValue(f"ratings.{dimension}: {raw!r} is not one of {', '.join(sorted(allowed))}")
    return text


@register
class Likert(SchemeKind):
    name = "likert"
    label = "Likert"
    gold = False
    why_no_gold = "Likert ratings are averaged, not adjudicated"
    vote_field = "ratings"
    ordinal = True
    widget = "ratings"

    def validate(self, scheme: LabelScheme, value: str, ratings: dict) -> dict:
        if value:
            raise InvalidValue(f"value: scheme {scheme.slug!r} is rated with 'ratings', not a value")
        dimensions = list(scheme.dimensions or [])
        for key in ratings:
            checked_text("ratings key", key, 50)
        unknown = sorted(set(ratings) - set(dimensions))
        if unknown:
            raise InvalidValue(f"ratings: unknown dimension(s) {', '.join(unknown)}; valid: {', '.join(dimensions)}")
        missing = [d for d in dimensions if d not in ratings]
        if missing:
            raise InvalidValue(f"ratings: missing {', '.join(missing)}")
        allowed = {str(v) for v in scheme.value_names()}
        return {d: _point(d, ratings[d], allowed) for d in dimensions}

    def describe(self, scheme: LabelScheme | None, value: str, ratings: Mapping | None) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted((ratings or {}).items())) or "(empty)"

    def agreement(self, scheme: LabelScheme, rows: list[tuple], stats: Any) -> dict:
        points = scheme.value_names()
        return {"dimensions": {
            dim: stats.summary(stats.label_matrix((pid, user, str((r or {}).get(dim, ""))) for pid, user, _, r in rows),
                               points, ordered=True)
            for dim in scheme.dimensions}}

    def agreement_rows(self, result: dict) -> list[tuple[str, dict]]:
        return [(f"{dim.capitalize()} (1–5)", summary) for dim, summary in result["dimensions"].items()]

    def label_counts(self, scheme: LabelScheme, counted: QuerySet, gold: dict[str, int]) -> dict:
        per_dim: dict[str, Counter] = {d: Counter() for d in scheme.dimensions}
        for ratings in counted.values_list("ratings", flat=True):
            for dim, point in (ratings or {}).items():
                if dim in per_dim:
                    per_dim[dim][str(point)] += 1
        return {"kind": self.name, "dimensions": {d: {p: c.get(p, 0) for p in scheme.value_names()}
                                                  for d, c in per_dim.items()}}
