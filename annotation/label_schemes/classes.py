"""The ``categorical`` kind: one value per pair, each counting as a class (aligned / partial / not).

Votes are values; a pair's votes settle into one gold value (majority or adjudicated); agreement is
computed on the scheme's values, on the classes and on aligned+partial vs not, plus link agreement.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django.db.models import Count

from annotation.label_schemes import InvalidValue, SchemeKind, register, value_classes

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from annotation.models import LabelScheme


@register
class Categorical(SchemeKind):
    name = "categorical"
    label = "categorical"
    gold = True
    vote_field = "value"
    widget = "choices"

    def validate(self, scheme: LabelScheme, value: str, ratings: dict) -> dict:
        if ratings:
            raise InvalidValue(f"ratings: only for Likert schemes; scheme {scheme.slug!r} takes a value "
                               f"({', '.join(scheme.value_names())})")
        if value not in scheme.value_names():
            raise InvalidValue(f"value: {value!r} is not a label of scheme {scheme.slug!r}; "
                               f"choose one of: {', '.join(scheme.value_names())}")
        return {}

    def describe(self, scheme: LabelScheme | None, value: str, ratings: Mapping | None) -> str:
        return repr(value) if value else "(empty)"

    def agreement(self, scheme: LabelScheme, rows: list[tuple], stats: Any) -> dict:
        # one matrix dropped before the next is built: at a million votes each holds hundreds of MB (issue 37)
        matrix = stats.label_matrix((pid, user, value) for pid, user, value, _ in rows)
        values = stats.summary(matrix, scheme.value_names())
        classes = stats.recode(matrix, value_classes(scheme))
        del matrix
        binary = stats.summary(stats.recode(classes, {"aligned": "aligned+partial", "partial": "aligned+partial",
                                                      "not": "not"}), ["aligned+partial", "not"])
        return {"values": values, "classes": stats.summary(classes, list(stats.CLASSES)), "binary": binary,
                "links": stats.pairwise_links(classes)}

    def agreement_rows(self, result: dict) -> list[tuple[str, dict]]:
        return [("Scheme labels", result["values"]), ("Classes: aligned / partial / not", result["classes"]),
                ("Binary: aligned + partial vs not", result["binary"])]

    def label_counts(self, scheme: LabelScheme, counted: QuerySet, gold: dict[str, int]) -> dict:
        votes = dict(counted.order_by().values_list("value").annotate(n=Count("id")))
        return {"kind": self.name, "values": [
            {"value": v["value"], "name": v.get("name", v["value"]), "counts_as": v.get("counts_as"),
             "votes": votes.get(v["value"], 0), "gold": gold.get(v["value"], 0)} for v in scheme.values]}
