"""Gold labels: in-house adjudication of crowd disagreements and automatic gold (SPEC §6, step 3).

The CRF paper's third step has in-house annotators verify the crowd's labels; WIVICO's two
annotators met to resolve their disagreements. Here a reviewer works through a queue of pairs whose
counted votes disagree (or every labelled pair when ``project.config["adjudicate"] == "all"``),
sees every vote and decides; the decision is the pair's :class:`~annotation.models.Adjudication`
(provenance ``adjudicated``) — the gold label that exports and training use.

Pairs nobody needs to discuss get gold automatically with :func:`auto_gold`: the majority of k
crowd votes (provenance ``majority``) or the only annotator's label (``single``). Automatic gold is
recomputed when votes change (:func:`refresh_majority`); adjudicated and imported gold is never
overwritten by it. The rule is :mod:`annotation.services.review.gold_rule`'s, as everywhere else. The page
asks before deciding many pairs at once: :func:`auto_gold_preview` counts what :func:`auto_gold` would do.

Every change of a pair's gold leaves an :class:`~annotation.models.AdjudicationChange` (old → new,
action, who): a first decision (``decide``), a later one (``change``), automatic gold created,
updated or removed (``majority``) and a :func:`revert`, which undoes the latest change not undone
yet — so reverting repeatedly walks back through the history to "no gold".

Config (``Project.config``)::

    {"adjudicate": "disagreements" | "all",   # what the review queue holds (default disagreements)
     "adjudicate_show_score": false}           # show the model's score to the reviewer (default: blind)
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Count, Max
from django.utils import timezone

from annotation.errors import DomainError
from annotation.label_schemes import UNKNOWN_KIND, scheme_kind, value_classes
from annotation.models import Adjudication, AdjudicationChange, CandidatePair, Project
from annotation.services.corpus.documents import pair_texts
from annotation.services.review import gold_reading, review_state
from annotation.services.review.gold_rule import UNDECIDED

MODES = ("disagreements", "all")
POLICIES = ("majority", "single")
# Gold a reviewer has settled: the queue leaves these pairs out and auto gold never touches them.
SETTLED = (Adjudication.ADJUDICATED, Adjudication.IMPORTED)


class AdjudicationError(DomainError, ValueError):
    """A decision or request refused (the message says why)."""


def queue_mode(project: Project) -> str:
    mode = (project.config or {}).get("adjudicate", "disagreements")
    if mode not in MODES:
        raise AdjudicationError(f"project config adjudicate must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


def shows_score(project: Project) -> bool:
    return bool((project.config or {}).get("adjudicate_show_score", False))


def queue_pair_ids(project: Project, *, mode: str | None = None) -> list[int]:
    """Ids (ascending) of the pairs awaiting review: ≥ 2 counted votes that disagree (mode ``disagreements``)
    or ≥ 1 counted vote (mode ``all``), minus pairs with settled gold; plus, in either mode, pairs whose imported
    gold a vote disagrees with (:func:`imported_disagreements`). Kept per state, of the data now (:func:`review_state.kept`)."""
    mode = mode or queue_mode(project)
    if mode not in MODES:
        raise AdjudicationError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    return review_state.kept(project, f"adjudication-queue:{mode}", lambda: _queue_pair_ids(project, mode)).value


def _queue_pair_ids(project: Project, mode: str) -> list[int]:
    rows = (gold_reading.counted_labels(project).order_by().values("pair_id")  # votes and distinct values a pair
            .annotate(votes=Count("id"), distinct=Count("value", distinct=True))
            .exclude(pair__gold__provenance__in=SETTLED))
    if mode == "disagreements":
        if scheme_kind(project.label_scheme).vote_field == "ratings":
            return _ratings_disagreements(project)
        rows = rows.filter(votes__gte=2, distinct__gte=2)
    return sorted({r["pair_id"] for r in rows} | imported_disagreements(project))


def imported_disagreements(project: Project) -> set[int]:
    """Pairs whose imported gold a counted vote disagrees with (issue 18 §3: imported gold never
    overrides annotators silently; the review shows both). A vote that links a pair whose imported
    gold is a link of unknown kind agrees with it. Deciding the pair settles it."""
    if scheme_kind(project.label_scheme).vote_field == "ratings":
        return set()
    classes = value_classes(project.label_scheme)
    out: set[int] = set()
    seen: dict[int, set[str]] = defaultdict(set)  # votes differing among themselves: a tie, undecided (issue 34)
    for pid, value, gold in (gold_reading.counted_labels(project).filter(pair__gold__provenance=Adjudication.IMPORTED)
                             .values_list("pair_id", "value", "pair__gold__value")):
        seen[pid].add(value)
        if value != gold and not (gold == UNKNOWN_KIND and classes.get(value) in ("aligned", "partial")):
            out.add(pid)
    return out | {pid for pid, values in seen.items() if len(values) >= 2}


def _ratings_disagreements(project: Project) -> list[int]:
    """Pairs whose counted ratings differ (a kind voting with ratings has no single value to count)."""
    ratings: dict[int, set[tuple]] = defaultdict(set)
    settled = set(Adjudication.objects.filter(pair__article__project=project, provenance__in=SETTLED)
                  .values_list("pair_id", flat=True))
    for pair_id, r in gold_reading.counted_labels(project).values_list("pair_id", "ratings"):
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


def queue_items(project: Project, pair_ids: list[int], *, with_score: bool | None = None) -> list[dict]:
    """The review payload of each pair: both sides' text, every counted vote, the tally, the stored gold (if
    any) and ``decided``: the pair's value as exports and training read it (``gold_reading.pair_gold``, ties
    as undecided); the model's score and predicted label when ``with_score``."""
    with_score = shows_score(project) if with_score is None else with_score
    pairs = {p.pk: p for p in CandidatePair.objects.filter(pk__in=pair_ids, article__project=project)
             .select_related("article", "complex_document", "simple_document", "gold__reviewer")}
    texts_of = pair_texts(pairs)
    votes: dict[int, list[Vote]] = defaultdict(list)
    labels = (gold_reading.counted_labels(project).filter(pair_id__in=pair_ids).select_related("annotator")
              .order_by("pair_id", "created_at", "id"))
    for label in labels:
        votes[label.pair_id].append(Vote(label.annotator.username, label.value, label.ratings, label.seconds,
                                         label.comment, label.created_at.isoformat()))
    # what exports and training read: the one gold reading (completions' implied nots included)
    exported = gold_reading.pair_gold(project, list(pairs), ties=True) if pairs else {}
    out = []
    for pid in pair_ids:
        pair = pairs.get(pid)
        if pair is None:
            continue
        complex_text, simple_text = texts_of.get(pid, ("", ""))
        gold = getattr(pair, "gold", None)
        decided = exported.get(pid)
        item = {
            "pair": pair.pk, "article": pair.article_id, "article_title": pair.article.title,
            "complex_level": pair.complex_document.level, "simple_level": pair.simple_document.level,
            "complex": pair.complex_indices, "simple": pair.simple_indices,
            "complex_text": complex_text, "simple_text": simple_text,
            "votes": [v.as_dict() for v in votes[pid]],
            "tally": dict(Counter(v.value for v in votes[pid] if v.value).most_common()),
            "gold": ({"value": gold.value, "provenance": gold.provenance, "note": gold.note,
                      "reviewer": gold.reviewer.username if gold.reviewer else None} if gold else None),
            "decided": {"value": decided.value, "provenance": decided.provenance} if decided else None,
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
        CandidatePair.objects.select_for_update().filter(pk=pair.pk).first()  # one decision or revert at a time
        old = Adjudication.objects.select_for_update().filter(pair=pair).first()
        record_gold_change(pair.pk, old, fields, action=action if old is None else "change", by=by)
        try:
            with transaction.atomic():
                return Adjudication.objects.update_or_create(pair=pair, defaults=fields)
        except IntegrityError:  # a concurrent first decision on the same pair: apply ours to it
            Adjudication.objects.filter(pair=pair).update(**fields)
            return Adjudication.objects.get(pair=pair), False


def refresh_majority(pair_id: int) -> None:
    """Recompute the pair's automatic gold (majority or single, the policy that wrote it) from its votes,
    counted and implied (``gold_reading``), after a vote changed; adjudicated and imported gold stays."""
    gold = Adjudication.objects.filter(pair_id=pair_id).select_related("pair__article__project").first()
    if gold is None or gold.provenance in SETTLED:
        return
    pair = gold.pair
    doc = gold_reading.read(pair.article.project, gold.provenance, articles=[pair.article_id], votes_only=True).get(
        (pair.complex_document_id, pair.simple_document_id))
    decided = doc.pairs.get(pair_id) if doc is not None else None
    value = decided.value if decided is not None and decided.value != UNDECIDED else None
    with transaction.atomic():
        if value is None:
            record_gold_change(pair_id, gold, None, action="majority")
            Adjudication.objects.filter(pk=gold.pk, provenance=gold.provenance).delete()
        elif value != gold.value:
            record_gold_change(pair_id, gold, {"value": value, "provenance": gold.provenance, "note": gold.note},
                               action="majority")
            Adjudication.objects.filter(pk=gold.pk, provenance=gold.provenance).update(value=value, created_at=timezone.now())


def decide(pair: CandidatePair, value: str, reviewer, note: str = "") -> Adjudication:
    """Record the reviewer's decision as the pair's gold (provenance ``adjudicated``). Deciding again
    replaces the earlier decision (same row); deciding the same thing twice changes nothing but the
    note and time. Raises :class:`AdjudicationError` for a value outside the scheme."""
    return decide_created(pair, value, reviewer, note)[0]


def decide_created(pair: CandidatePair, value: str, reviewer, note: str = "") -> tuple[Adjudication, bool]:
    """:func:`decide`, and whether this call created the gold row (read under the pair's lock)."""
    scheme = pair.article.project.label_scheme
    kind = scheme_kind(scheme)
    if not kind.gold:
        raise AdjudicationError(f"{kind.why_no_gold}; choose a categorical scheme")
    if value not in scheme.value_names():
        raise AdjudicationError(f"{value!r} is not a label of scheme {scheme.slug!r}; choose one of: "
                                f"{', '.join(scheme.value_names())}")
    return _set_gold(pair, value=value, provenance=Adjudication.ADJUDICATED, reviewer=reviewer,
                     note=note or "", created_at=timezone.now(), by=reviewer)


@dataclass(frozen=True)
class GoldPlan:
    """What :func:`auto_gold` would do now: gold to create (pair → value), to update (gold row →
    value) and to remove (gold rows), plus how many pairs stay as they are and how many are ties."""

    provenance: str
    create: dict[int, str]
    update: list[tuple[Adjudication, str]]
    remove: list[Adjudication]
    unchanged: int
    ties: int

    def counts(self) -> dict[str, int]:
        return {"created": len(self.create), "updated": len(self.update), "unchanged": self.unchanged,
                "removed": len(self.remove), "ties": self.ties}


def _check_policy(project: Project, policy: str) -> str:
    if policy not in POLICIES:
        raise AdjudicationError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    if not scheme_kind(project.label_scheme).gold:
        raise AdjudicationError("automatic gold needs a categorical scheme")
    return Adjudication.MAJORITY if policy == "majority" else Adjudication.SINGLE


def _plan(project: Project, policy: str) -> GoldPlan:
    provenance = _check_policy(project, policy)
    decided_by_votes = {pid: g for doc in gold_reading.read(project, policy, votes_only=True).values()
                        for pid, g in doc.pairs.items()}
    existing = {g.pair_id: g for g in Adjudication.objects.filter(pair__article__project=project)}
    create: dict[int, str] = {}
    update: list[tuple[Adjudication, str]] = []
    remove: list[Adjudication] = []
    unchanged = ties = 0
    for pair_id, decided in decided_by_votes.items():
        current = existing.get(pair_id)
        if current is not None and current.provenance in SETTLED:
            continue
        value = decided.value if decided.value != UNDECIDED else None
        if value is None:
            ties += 1
            if current is not None and current.provenance == provenance:
                remove.append(current)
        elif current is None:
            create[pair_id] = value
        elif current.value == value and current.provenance == provenance:
            unchanged += 1
        else:
            update.append((current, value))
    return GoldPlan(provenance, create, update, remove, unchanged, ties)


def auto_gold_preview(project: Project, policy: str = "majority") -> dict[str, int]:
    """What :func:`auto_gold` would do now, without writing anything: the same counts plus
    ``total`` (pairs whose gold it would create, update or remove) — the number the page asks the
    researcher to confirm, and that the API wants echoed back (``expected``)."""
    counts = _plan(project, policy).counts()
    return {**counts, "total": counts["created"] + counts["updated"] + counts["removed"]}


def _change_row(pair_id: int, old: Adjudication | None, new: dict | None, *, action: str, by) -> AdjudicationChange:
    new = new or {}
    return AdjudicationChange(
        pair_id=pair_id, old_value=old.value if old else "", old_provenance=old.provenance if old else "",
        old_note=old.note if old else "", new_value=new.get("value", ""), new_provenance=new.get("provenance", ""),
        new_note=new.get("note", ""), action=action, changed_by=by)


def auto_gold(project: Project, policy: str = "majority", *, by=None) -> dict[str, int]:
    """Gold for the pairs nobody adjudicated; idempotent.

    ``majority``: pairs with ≥ 2 counted votes and a single most frequent value get it (provenance
    ``majority``; ties are left for the review queue). ``single``: pairs with exactly one counted
    vote get that vote (provenance ``single``). Earlier automatic gold is updated when the votes
    changed (or removed when there is no longer a majority); adjudicated and imported gold is kept,
    and so is gold that changed since it was read (a decision made meanwhile wins). Every creation,
    update and removal leaves an ``AdjudicationChange`` (action ``majority``, ``changed_by=by``).

    Returns counts: ``created``, ``updated``, ``unchanged``, ``removed``, ``ties``.
    """
    now = timezone.now()
    history: list[AdjudicationChange] = []
    stats = Counter(created=0, updated=0, unchanged=0, removed=0, ties=0)
    with transaction.atomic():
        plan = _plan(project, policy)
        stats.update(unchanged=plan.unchanged, ties=plan.ties)
        for current, value in plan.update:
            # conditional: only the gold as it was read (not a decision made meanwhile)
            if Adjudication.objects.filter(pk=current.pk, value=current.value, provenance=current.provenance).update(
                    value=value, provenance=plan.provenance, reviewer=None, created_at=now):
                history.append(_change_row(current.pair_id, current, {"value": value, "provenance": plan.provenance,
                                                                      "note": current.note}, action="majority", by=by))
                stats["updated"] += 1
        for current in plan.remove:
            if Adjudication.objects.filter(pk=current.pk, value=current.value, provenance=current.provenance).delete()[0]:
                history.append(_change_row(current.pair_id, current, None, action="majority", by=by))
                stats["removed"] += 1
        # a decision made meanwhile wins: its pair is skipped, not overwritten
        Adjudication.objects.bulk_create([Adjudication(pair_id=pair_id, value=value, provenance=plan.provenance,
                                                       created_at=now) for pair_id, value in plan.create.items()],
                                         batch_size=1000, ignore_conflicts=True)
        created = Adjudication.objects.filter(pair_id__in=list(plan.create), provenance=plan.provenance, created_at=now)
        for pair_id, value in created.values_list("pair_id", "value"):
            history.append(_change_row(pair_id, None, {"value": value, "provenance": plan.provenance},
                                       action="majority", by=by))
            stats["created"] += 1
        AdjudicationChange.objects.bulk_create(history, batch_size=1000)
    return dict(stats)


# --- History and revert ---------------------------------------------------------------------------

def history(pair: CandidatePair) -> list[AdjudicationChange]:
    """Every change of the pair's gold, oldest first (with who made it)."""
    return list(AdjudicationChange.objects.filter(pair=pair).select_related("changed_by").order_by("id"))


def _undo_stack(changes: list[AdjudicationChange]) -> list[AdjudicationChange]:
    """The changes not reverted yet, oldest first: a revert takes back the latest change before it
    that is still standing, so reverting twice takes back two changes."""
    stack: list[AdjudicationChange] = []
    for change in changes:
        if change.action == "revert":
            if stack:
                stack.pop()
        else:
            stack.append(change)
    return stack


def revert_target(pair: CandidatePair, changes: list[AdjudicationChange] | None = None) -> AdjudicationChange | None:
    """The change :func:`revert` would take back (its ``old_*`` fields are the gold it restores;
    an empty ``old_value`` means no gold), or None when nothing is left to revert."""
    stack = _undo_stack(history(pair) if changes is None else changes)
    return stack[-1] if stack else None


def revert(pair: CandidatePair, by) -> Adjudication | None:
    """Restore the pair's gold as it was before its latest change not reverted yet: the earlier
    value, provenance and note (and the reviewer who had set it), or no gold when there was none.
    The revert itself is recorded (action ``revert``). Returns the gold now (None: no gold).

    Raises :class:`AdjudicationError` when the pair's gold has no change left to revert.

    Example:
        decide(pair, "aligned", rita); decide(pair, "partial", rita)
        revert(pair, rita).value   # 'aligned'
        revert(pair, rita)         # None: before the first decision there was no gold
    """
    with transaction.atomic():
        CandidatePair.objects.select_for_update().filter(pk=pair.pk).first()  # one revert or decision at a time
        stack = _undo_stack(history(pair))
        if not stack:
            raise AdjudicationError(f"pair #{pair.pk} has no gold change to revert")
        target = stack[-1]
        current = Adjudication.objects.select_for_update().filter(pair=pair).first()
        if not target.old_value:
            record_gold_change(pair.pk, current, None, action="revert", by=by)
            if current is not None:
                current.delete()
            return None
        # who had set the restored gold: the author of the standing change before the target
        reviewer = stack[-2].changed_by if len(stack) >= 2 and target.old_provenance == Adjudication.ADJUDICATED else None
        fields = {"value": target.old_value, "provenance": target.old_provenance, "note": target.old_note}
        AdjudicationChange.objects.create(**{f"new_{k}": v for k, v in fields.items()}, pair_id=pair.pk,
                                          old_value=current.value if current else "",
                                          old_provenance=current.provenance if current else "",
                                          old_note=current.note if current else "", action="revert", changed_by=by)
        gold, _ = Adjudication.objects.update_or_create(pair=pair, defaults={**fields, "reviewer": reviewer,
                                                                             "created_at": timezone.now()})
        return gold


def recently_decided_pair_ids(project: Project) -> list[int]:
    """Pairs whose gold a person decided, changed or reverted, the latest first."""
    rows = (AdjudicationChange.objects.filter(pair__article__project=project, action__in=("decide", "change", "revert"))
            .order_by().values("pair_id").annotate(last=Max("id")).order_by("-last"))
    return [r["pair_id"] for r in rows]


def change_payload(change: AdjudicationChange) -> dict:
    return {"id": change.pk, "action": change.action,
            "old": {"value": change.old_value, "provenance": change.old_provenance, "note": change.old_note}
            if change.old_value else None,
            "new": {"value": change.new_value, "provenance": change.new_provenance, "note": change.new_note}
            if change.new_value else None,
            "by": change.changed_by.username if change.changed_by else None, "at": change.created_at.isoformat()}


def pair_review(project: Project, pair: CandidatePair) -> dict:
    """One pair for the review page: its payload (texts, votes, gold), its gold history (oldest
    first) and what a revert would restore (``revert_to``: None when there is nothing to revert,
    ``{"value": ""}`` when it would remove the gold)."""
    [item] = queue_items(project, [pair.pk])
    changes = history(pair)
    target = revert_target(pair, changes)
    return {**item, "history": [change_payload(c) for c in changes],
            "revert_to": None if target is None else {"value": target.old_value, "provenance": target.old_provenance}}


def gold_counts(project: Project) -> dict[str, int]:
    """How many pairs have gold, by provenance."""
    rows = (Adjudication.objects.filter(pair__article__project=project).order_by().values("provenance")
            .annotate(n=Count("id")))
    return {r["provenance"]: r["n"] for r in rows}


def remaining(project: Project) -> int:
    return len(queue_pair_ids(project))


__all__ = ["AdjudicationError", "MODES", "POLICIES", "auto_gold", "auto_gold_preview", "decide", "decide_created",
           "gold_counts", "history", "pair_review", "queue_items", "queue_pair_ids", "queue_mode",
           "recently_decided_pair_ids", "refresh_majority", "remaining", "revert", "revert_target", "review_queue", "shows_score"]
