"""Filtering and ordering candidate pairs by score, predicted label and stored attributes.

Query-string grammar (used by ``/api/pairs/``; reusable by exports):

* ``ordering=<term>[,<term>...]`` — ``id``, ``score``, ``created_at`` or ``features__<key>``, each
  optionally prefixed by ``-`` for descending; pairs without the attribute come last;
* ``f.<key>__<op>=<number>`` — ``op`` ∈ gte, gt, lte, lt, exact (``f.<key>=<number>`` = exact), or
  ``f.<key>__isnull=true|false``; comparisons are numeric (flags are stored as 1.0/0.0);
* ``label=<value>[,<value>...]`` — the predicted label;
* ``labelled=1|0`` — somebody labelled the pair (or it has gold), or not;
* ``shape=1:1|n:m|1:n|n:1|<a>:<b>`` — sentences on each side (``n:m`` = anything but 1:1,
  ``1:n`` = a split, ``n:1`` = a merge, ``2:1`` = exactly two complex and one simple sentence);
* ``score__gte=<number>``, ``score__lte=<number>`` — the score's range;
* ``q=<text>`` — a sentence of either side contains the text (case-insensitive).

Given a ``run``, ``score`` and ``label`` are that run's prediction (what the run itself produced),
not the pair's latest one.

Attribute keys are JSON keys of ``CandidatePair.features``, compared through JSONField key
transforms (jsonb on PostgreSQL, JSON1 on SQLite), so both databases order and compare numbers
numerically. Every problem raises :class:`PairFilterError` naming the parameter.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

from django.db.models import Exists, F, OuterRef, QuerySet, Subquery, Value
from django.db.models.fields.json import KeyTransform
from django.db.models.functions import Length, Replace

from annotation.errors import DomainError
from annotation.models import Adjudication, Label, PairSentence, Prediction
from annotation.requests import Option

KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")
OPERATORS = ("gte", "gt", "lte", "lt", "exact", "isnull")
PLAIN_ORDERING = ("id", "score", "created_at")
PREDICTION_FIELDS = ("score",)


class PairFilterError(DomainError, ValueError):
    """A bad filter or ordering parameter (``param`` names it for a 400 response)."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(message)
        self.param = param

    def payload(self) -> dict:
        return {self.param: str(self)}


def _key(param: str, key: str) -> str:
    if not KEY.match(key):
        raise PairFilterError(param, f"invalid attribute key {key!r}: use letters, digits and underscores "
                                     "(e.g. access_char_ratio)")
    return key


#: every number of the query string: a finite float, as the Option schema reads a query string's text
NUMBER = Option("number", "float", help="a finite number")


def _float(param: str, raw: str) -> float:
    value = NUMBER.from_text(raw)
    why = NUMBER.problem(value) if value is not None else f"must be a number, got {raw!r}"
    if why:
        raise PairFilterError(param, why)
    return float(value)


def parse_ordering(raw: str) -> list[tuple[str, str | None, bool]]:
    """``[(field, feature key or None, descending)]`` of an ``ordering`` value."""
    terms = []
    for term in (t.strip() for t in raw.split(",")):
        if not term:
            raise PairFilterError("ordering", "empty ordering term")
        descending = term.startswith("-")
        name = term[1:] if descending else term
        if name in PLAIN_ORDERING:
            terms.append((name, None, descending))
        elif name.startswith("features__"):
            terms.append(("features", _key("ordering", name[len("features__"):]), descending))
        else:
            raise PairFilterError("ordering", f"cannot order by {name!r}; use id, score, created_at or "
                                              "features__<key> (prefix - for descending)")
    return terms


def parse_filters(params: Mapping[str, str]) -> list[tuple[str, str, object]]:
    """``[(key, operator, value)]`` of the ``f.<key>__<op>`` parameters."""
    out = []
    for param, raw in params.items():
        if not param.startswith("f."):
            continue
        spec = param[2:]
        key, _, op = spec.rpartition("__") if "__" in spec else (spec, "", "exact")
        if op not in OPERATORS:
            raise PairFilterError(param, f"unknown operator {op!r}; use one of: {', '.join(OPERATORS)}")
        key = _key(param, key)
        if op == "isnull":
            if raw.lower() not in ("true", "false", "1", "0"):
                raise PairFilterError(param, f"must be true or false, got {raw!r}")
            out.append((key, op, raw.lower() in ("true", "1")))
        else:
            out.append((key, op, _float(param, raw)))
    return out


def uses_predictions(params: Mapping[str, str]) -> bool:
    """Whether the request filters or orders by anything derived from a model (score, label, attributes)."""
    if params.get("label") or any(p.startswith(("f.", "score__")) for p in params):
        return True
    ordering = params.get("ordering") or ""
    return any(t.strip().lstrip("-") == "score" or t.strip().lstrip("-").startswith("features__")
               for t in ordering.split(","))


SHAPE = re.compile(r"^(1|n|[1-9][0-9]?):(1|m|n|[1-9][0-9]?)$")


def _count(field: str):
    """Sentences in a canonical key (``"3,4"`` → 2) as an SQL expression."""
    return Length(field) - Length(Replace(field, Value(","), Value(""))) + 1


def _shape(qs: QuerySet, raw: str) -> QuerySet:
    raw = raw.strip().lower()
    match = SHAPE.match(raw)
    if not match:
        raise PairFilterError("shape", f"unknown shape {raw!r}; use 1:1, n:m, 1:n, n:1 or e.g. 2:1")
    qs = qs.alias(_n_complex=_count("complex_key"), _n_simple=_count("simple_key"))
    if raw == "n:m":
        return qs.exclude(_n_complex=1, _n_simple=1)
    a, b = match.groups()
    if a != "n":
        qs = qs.filter(_n_complex=int(a))
    if b not in ("m", "n"):
        qs = qs.filter(_n_simple=int(b))
    if a == "n":
        qs = qs.filter(_n_complex__gt=1)
    if b in ("m", "n"):
        qs = qs.filter(_n_simple__gt=1)
    return qs


def apply(qs: QuerySet, params: Mapping[str, str], run: int | None = None) -> QuerySet:
    """Apply ``ordering``, ``f.*``, ``label``, ``labelled``, ``shape`` and ``q`` from ``params`` to a
    CandidatePair queryset; with ``run``, score and label are that run's predictions.

    Raises:
        PairFilterError: a bad key, operator, value or ordering term.
    """
    label_field, score_field = "predicted_label", "score"
    if run is not None:
        mine = Prediction.objects.filter(pair=OuterRef("pk"), run_id=run)
        qs = qs.alias(_run_score=Subquery(mine.values("score")[:1]), _run_label=Subquery(mine.values("predicted_label")[:1]))
        label_field, score_field = "_run_label", "_run_score"
    labelled = params.get("labelled")
    if labelled not in (None, ""):
        if labelled.lower() not in ("1", "0", "true", "false"):
            raise PairFilterError("labelled", f"must be 1 or 0, got {labelled!r}")
        has = Exists(Label.objects.filter(pair=OuterRef("pk"))) | Exists(Adjudication.objects.filter(pair=OuterRef("pk")))
        qs = qs.filter(has) if labelled.lower() in ("1", "true") else qs.exclude(has)
    if params.get("shape"):
        qs = _shape(qs, params["shape"])
    for op in ("gte", "lte"):
        raw_score = params.get(f"score__{op}")
        if raw_score not in (None, ""):
            qs = qs.filter(**{f"{score_field}__{op}": _float(f"score__{op}", raw_score)})
    text = (params.get("q") or "").strip()
    if text:
        qs = qs.filter(Exists(PairSentence.objects.filter(pair=OuterRef("pk"), sentence__text__icontains=text)))
    for n, (key, op, value) in enumerate(parse_filters(params)):
        alias = f"_attr{n}"
        qs = qs.alias(**{alias: KeyTransform(key, "features")}).filter(**{f"{alias}__{op}": value})
    label = params.get("label")
    if label is not None:
        values = [v.strip() for v in label.split(",") if v.strip()]
        if not values:
            raise PairFilterError("label", "give a predicted label, e.g. label=aligned")
        qs = qs.filter(**{f"{label_field}__in": values})
    raw = params.get("ordering")
    if raw:
        order = []
        for n, (field, key, descending) in enumerate(parse_ordering(raw)):
            if key is not None:
                alias = f"_order{n}"
                qs = qs.alias(**{alias: KeyTransform(key, "features")})
                expr = F(alias)
            else:
                expr = F(score_field if field == "score" else field)
            order.append(expr.desc(nulls_last=True) if descending else expr.asc(nulls_last=True))
        qs = qs.order_by(*order, "id")
    return qs
