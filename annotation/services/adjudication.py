"""Gold labels: in-house adjudication of crowd disagreements and automatic gold (SPEC §6, step 3).

The CRF paper's third step has in-house annotators verify the crowd's labels; WIVICO's two
annotators met to resolve their disagreements. Here a reviewer works through a queue of pairs whose
counted votes disagree (or every labelled pair when ``project.config["adjudicate"] == "all"``),
sees every vote and decides; the decision is the pair's :class:`~annotation.models.Adjudication`
(provenance ``adjudicated``) — the gold label that exports and training use.

Pairs nobody needs to discuss get gold automatically with :func:`auto_gold`: the majority of k
crowd votes (provenance ``majority``) or the only annotator's label (``single``). Automatic gold is
recomputed when votes change; adjudicated and imported gold is never overwritten by it.

Config (``Project.config``)::

    {"adjudicate": "disagreements" | "all",   # what the review queue holds (default disagreements)
     "adjudicate_show_score": false}           # show the model's score to the reviewer (default: blind)
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Count, QuerySet
from django.utils import timezone

from ..models import Adjudication, AdjudicationChange, CandidatePair, LabelScheme, Project, Side
from . import qc

MODES = ("disagreements", "all")
POLICIES = ("majority", "single")
# Gold a reviewer has settled: the queue leaves these pairs out and auto gold never touches them.
SETTLED = (Adjudication.ADJUDICATED, Adjudication.IMPORTED)


class AdjudicationError(ValueError):
    """A decision or request refused (the message says why)."""


def queue_mode(project: Project) -> str:
    mode = (project.config or {}).get("adjudicate", "disagreements")
    if mode not in MODES:
        raise AdjudicationError(f"project config adjudicate must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


def shows_score(project: Project) -> bool:
    return bool((project.config or {}).get("adjudicate_show_score", False))


def _vote_counts(project: Project) -> QuerySet:
    """Per pair of the project: number of counted votes and of distinct values among them."""
    return (qc.counted_labels(project).order_by().values("pair_id")
            .annotate(votes=Count("id"), distinct=Count("value", distinct=True)))


def queue_pair_ids(project: Project, *, mode: str | None = None) -> list[int]:
    """Ids (ascending) of the pairs awaiting review: ≥ 2 counted votes that disagree (mode
    ``disagreements``) or ≥ 1 counted vote (mode ``all``), minus pairs with settled gold."""
    mode = mode or queue_mode(project)
    if mode not in MODES:
        raise AdjudicationError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    rows = _vote_counts(project).exclude(pair__gold__provenance__in=SETTLED)
    if mode == "disagreements":
        if project.label_scheme.kind == LabelScheme.LIKERT:
            return _likert_disagreements(project)
        rows = rows.filter(votes__gte=2, distinct__gte=2)
    return sorted(r["pair_id"] for r in rows)


def _likert_disagreements(project: Project) -> list[int]:
    ratings: dict[int, set[tuple]] = defaultdict(set)
    settled = set(Adjudication.objects.filter(pair__article__project=project, provenance__in=SETTLED)
                  .values_list("pair_id", flat=True))
    for pair_id, r in qc.counted_labels(project).values_list("pair_id", "ratings"):
        if pair_id not in settled:
            ratings[pair_id].add(tuple(sorted((r or {}).items())))
    return sorted(pid for pid, distinct in ratings.items() if len(distinct) >= 2)


@dataclass(frozen=True)
class Vote:
    annotator: str
    value: str
    ratings: dict
    seconds: float
    comment: str
    created_at: str

    def as_dict(self) -> dict:
        return self.__dict__.copy()


def _sides(pair: CandidatePair) -> dict[str, str]:
    texts = {Side.COMPLEX: [], Side.SIMPLE: []}
    for member in sorted(pair.members.all(), key=lambda m: m.sentence.index):
        texts[member.side].append(member.sentence.text)
    return {side: " ".join(parts) for side, parts in texts.items()}


def queue_items(project: Project, pair_ids: list[int], *, with_score: bool | None = None) -> list[dict]:
    """The review payload of each pair: both sides' text, every counted vote, the tally and the
    current gold (if any); the model's score and predicted label when ``with_score``."""
    with_score = shows_score(project) if with_score is None else with_score
    pairs = {p.pk: p for p in CandidatePair.objects.filter(pk__in=pair_ids, article__project=project)
             .select_related("article", "complex_document", "simple_document", "gold")
             .prefetch_related("members__sentence")}
    votes: dict[int, list[Vote]] = defaultdict(list)
    labels = (qc.counted_labels(project).filter(pair_id__in=pair_ids).select_related("annotator")
              .order_by("pair_id", "created_at", "id"))
    for label in labels:
        votes[label.pair_id].append(Vote(label.annotator.username, label.value, label.ratings, label.seconds,
                                         label.comment, label.created_at.isoformat()))
    out = []
    for pid in pair_ids:
        pair = pairs.get(pid)
        if pair is None:
            continue
        texts = _sides(pair)
        gold = getattr(pair, "gold", None)
        item = {
            "pair": pair.pk, "article": pair.article_id, "article_title": pair.article.title,
            "complex_level": pair.complex_document.level, "simple_level": pair.simple_document.level,
            "complex": pair.complex_indices, "simple": pair.simple_indices,
            "complex_text": texts[Side.COMPLEX], "simple_text": texts[Side.SIMPLE],
            "votes": [v.as_dict() for v in votes[pid]],
            "tally": dict(Counter(v.value for v in votes[pid] if v.value).most_common()),
            "gold": {"value": gold.value, "provenance": gold.provenance} if gold else None,
        }
        if with_score:
            item["score"] = pair.score
            item["predicted_label"] = pair.predicted_label
        out.append(item)
    return out


def review_queue(project: Project, *, mode: str | None = None, with_score: bool | None = None) -> list[dict]:
    """The whole queue with payloads (for small projects and tests; views paginate the ids)."""
    return queue_items(project, queue_pair_ids(project, mode=mode), with_score=with_score)


def record_gold_change(pair_id: int, old: Adjudication | None, new: dict | None, *, action: str, by=None) -> None:
    """A history row for the pair's gold going from ``old`` (None: none) to ``new`` (None: removed)."""
    if old is not None and new is not None and old.value == new.get("value") and old.provenance == new.get("provenance") \
            and old.note == new.get("note", old.note):
        return
    new = new or {}
    AdjudicationChange.objects.create(
        pair_id=pair_id, old_value=old.value if old else "", old_provenance=old.provenance if old else "",
        old_note=old.note if old else "", new_value=new.get("value", ""), new_provenance=new.get("provenance", ""),
        new_note=new.get("note", ""), action=action, changed_by=by)


def _set_gold(pair: CandidatePair, *, action: str = "decide", by=None, **fields) -> tuple[Adjudication, bool]:
    with transaction.atomic():
        old = Adjudication.objects.select_for_update().filter(pair=pair).first()
        record_gold_change(pair.pk, old, fields, action=action if old is None else "change", by=by)
        try:
            with transaction.atomic():
                return Adjudication.objects.update_or_create(pair=pair, defaults=fields)
        except IntegrityError:  # a concurrent first decision on the same pair: apply ours to it
            Adjudication.objects.filter(pair=pair).update(**fields)
            return Adjudication.objects.get(pair=pair), False


def refresh_majority(pair_id: int) -> None:
    """Recompute the pair's automatic gold (majority or single) from its counted votes after a vote
    changed; adjudicated and imported gold stays as the reviewer left it."""
    gold = Adjudication.objects.filter(pair_id=pair_id).select_related("pair__article__project").first()
    if gold is None or gold.provenance in SETTLED:
        return
    project = gold.pair.article.project
    values = list(qc.counted_labels(project).filter(pair_id=pair_id).values_list("value", flat=True))
    wanted = len(values) >= 2 if gold.provenance == Adjudication.MAJORITY else len(values) == 1
    value = majority_value(values) if wanted else None
    with transaction.atomic():
        if value is None:
            record_gold_change(pair_id, gold, None, action="majority")
            Adjudication.objects.filter(pk=gold.pk, provenance=gold.provenance).delete()
        elif value != gold.value:
            record_gold_change(pair_id, gold, {"value": value, "provenance": gold.provenance, "note": gold.note},
                               action="majority")
            Adjudication.objects.filter(pk=gold.pk, provenance=gold.provenance).update(value=value, created_at=timezone.now())


def decide(pair: CandidatePair, value: str, reviewer, note: str = "") -> Adjudication:
    """Record the reviewer's decision as the pair's gold (provenance ``adjudicated``).

    Deciding again replaces the earlier decision (same row); deciding the same thing twice changes
    nothing but the note and time. Raises :class:`AdjudicationError` for a value outside the scheme.
    """
    scheme = pair.article.project.label_scheme
    if scheme.kind == LabelScheme.LIKERT:
        raise AdjudicationError("Likert ratings are averaged, not adjudicated; choose a categorical scheme")
    if value not in scheme.value_names():
        raise AdjudicationError(f"{value!r} is not a label of scheme {scheme.slug!r}; choose one of: "
                                f"{', '.join(scheme.value_names())}")
    gold, _ = _set_gold(pair, value=value, provenance=Adjudication.ADJUDICATED, reviewer=reviewer,
                        note=note or "", created_at=timezone.now(), by=reviewer)
    return gold


def majority_value(values: list[str]) -> str | None:
    """The most frequent value when it is the only one with that count (ties: None).

    Example:
        >>> majority_value(["a", "b", "a"]), majority_value(["a", "b"])
        ('a', None)
    """
    ranked = Counter(v for v in values if v).most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def auto_gold(project: Project, policy: str = "majority") -> dict[str, int]:
    """Gold for the pairs nobody adjudicated; idempotent.

    ``majority``: pairs with ≥ 2 counted votes and a single most frequent value get it (provenance
    ``majority``; ties are left for the review queue). ``single``: pairs with exactly one counted
    vote get that vote (provenance ``single``). Earlier automatic gold is updated when the votes
    changed (or removed when there is no longer a majority); adjudicated and imported gold is kept.

    Returns counts: ``created``, ``updated``, ``unchanged``, ``removed``, ``ties``.
    """
    if policy not in POLICIES:
        raise AdjudicationError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    if project.label_scheme.kind == LabelScheme.LIKERT:
        raise AdjudicationError("automatic gold needs a categorical scheme")
    provenance = Adjudication.MAJORITY if policy == "majority" else Adjudication.SINGLE
    votes: dict[int, list[str]] = defaultdict(list)
    for pair_id, value in qc.counted_labels(project).values_list("pair_id", "value"):
        votes[pair_id].append(value)
    existing = {g.pair_id: g for g in Adjudication.objects.filter(pair__article__project=project)}
    stats = Counter(created=0, updated=0, unchanged=0, removed=0, ties=0)
    new: list[Adjudication] = []
    with transaction.atomic():
        for pair_id, values in votes.items():
            current = existing.get(pair_id)
            if current is not None and current.provenance in SETTLED:
                continue
            if policy == "majority" and len(values) < 2 or policy == "single" and len(values) != 1:
                continue
            value = majority_value(values)
            if value is None:
                stats["ties"] += 1
                if current is not None and current.provenance == provenance:
                    current.delete()
                    stats["removed"] += 1
                continue
            if current is None:
                new.append(Adjudication(pair_id=pair_id, value=value, provenance=provenance))
                stats["created"] += 1
            elif current.value == value and current.provenance == provenance:
                stats["unchanged"] += 1
            else:
                Adjudication.objects.filter(pk=current.pk).update(value=value, provenance=provenance,
                                                                  reviewer=None, created_at=timezone.now())
                stats["updated"] += 1
        # a decision made meanwhile wins: its pair is skipped, not overwritten
        Adjudication.objects.bulk_create(new, batch_size=1000, ignore_conflicts=True)
    return dict(stats)


def gold_counts(project: Project) -> dict[str, int]:
    """How many pairs have gold, by provenance."""
    rows = (Adjudication.objects.filter(pair__article__project=project).order_by().values("provenance")
            .annotate(n=Count("id")))
    return {r["provenance"]: r["n"] for r in rows}


def remaining(project: Project) -> int:
    return len(queue_pair_ids(project))


__all__ = ["AdjudicationError", "MODES", "POLICIES", "auto_gold", "decide", "gold_counts", "majority_value",
           "queue_items", "queue_pair_ids", "queue_mode", "remaining", "review_queue", "shows_score"]
