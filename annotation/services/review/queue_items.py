"""One queue item as the labelling page shows it: the pair's sentences, groups, word diff and context."""
from __future__ import annotations

from django.db.models import Q

from annotation.label_schemes import scheme_kind
from annotation.models import CandidatePair, LabelScheme, PairSentence, Project, Sentence, Side
from annotation.services.review import word_diff
from annotation.services.review.queue_compiled import PAIR, compiled_values

CONTEXT_SENTENCES = 2  # neighbours shown on each side of the pair, besides its whole paragraphs


def scheme_payload(scheme: LabelScheme) -> dict:
    """The scheme as the labelling pages' scripts read it: its kind's JSON description
    (:meth:`annotation.label_schemes.SchemeKind.page_data`: widget, gold, values, dimensions)."""
    return {"slug": scheme.slug, "name": scheme.name, **scheme_kind(scheme).page_data(scheme)}


def groups(indices: list[int]) -> list[list[int]]:
    """Runs of consecutive sentence indices: ``[3, 4, 7]`` → ``[[3, 4], [7]]`` (an n:m pair's groups)."""
    runs: list[list[int]] = []
    for i in sorted(indices):
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def _sentence(s: Sentence, members: set[int] | None = None) -> dict:
    data = {"index": s.index, "paragraph": s.paragraph.index, "text": s.text}
    if members is not None:
        data["in_pair"] = s.index in members
    return data


def _loaded(pair: CandidatePair) -> bool:
    """Whether ``pair``'s row and article are loaded (the queue's claim loads only the id)."""
    return "article" in pair._state.fields_cache and "article_id" in pair.__dict__


_CLAIMED = ("side", "sentence__index", "sentence__text", "sentence__paragraph__index", "sentence__document_id",
            "sentence__document__level", "pair__article_id", "pair__article__title", "pair__complex_document_id",
            "pair__simple_document_id")


def _claimed_payload(pair_id: int) -> dict | None:
    """A blind item (no prediction, no context) for a pair the queue just claimed (only its id loaded): its
    sentences, documents and article in one query compiled once per process (``queue_compiled``; issue 37:
    building this query with the ORM cost more than running it). None when a side has no sentence (then
    the general path loads the pair and its documents)."""
    rows = compiled_values(("item",), lambda: PairSentence.objects.filter(pair_id=PAIR).order_by("sentence__index")
                           .values_list(*_CLAIMED), pair=pair_id)
    if not rows:
        return None
    first = rows[0]
    members = {side: [r for r in rows if r["side"] == side] for side in (Side.COMPLEX, Side.SIMPLE)}
    documents = {Side.COMPLEX: first["pair__complex_document_id"], Side.SIMPLE: first["pair__simple_document_id"]}
    if not all(members.values()) or any(r["sentence__document_id"] != documents[r["side"]] for r in rows):
        return None
    sides = {}
    for side, side_rows in members.items():
        indices = [r["sentence__index"] for r in side_rows]
        sides[side] = {"document": documents[side], "level": side_rows[0]["sentence__document__level"],
                       "indices": indices, "groups": groups(indices),
                       "sentences": [{"index": r["sentence__index"], "paragraph": r["sentence__paragraph__index"],
                                      "text": r["sentence__text"]} for r in side_rows]}
    return _payload(pair_id, first["pair__article_id"], first["pair__article__title"], sides)


def _payload(pair_id: int, article_id: int, title: str, sides: dict) -> dict:
    return {
        "pair": pair_id,
        "article": {"id": article_id, "title": title},
        "complex": sides[Side.COMPLEX],
        "simple": sides[Side.SIMPLE],
        "shape": f"{len(sides[Side.COMPLEX]['indices'])}:{len(sides[Side.SIMPLE]['indices'])}",
        # changed words, matched across each whole side (reordered sentences are not "changed")
        "diff": word_diff.changed_spans(sides[Side.COMPLEX]["sentences"], sides[Side.SIMPLE]["sentences"]),
    }


def item_payload(pair: CandidatePair, project: Project, *, with_context: bool = False, reveal: bool = False) -> dict:
    """One pair as the labelling page shows it. Blind: no other annotator's label, and no model
    score, prediction or reason for serving it unless ``reveal`` (the viewer is a researcher) or the
    project's config has ``"show_predictions": true``."""
    shown = reveal or (project.config or {}).get("show_predictions")
    if not _loaded(pair) and not shown and not with_context:  # the labelling loop's item: one compiled query
        payload = _claimed_payload(pair.pk)
        if payload is not None:
            return payload
    members = list(PairSentence.objects.filter(pair_id=pair.pk).select_related(
        *(() if _loaded(pair) else ("pair__article",)), "sentence__paragraph", "sentence__document").order_by("sentence__index"))
    if not _loaded(pair):  # a pair the queue just claimed (only its id): it comes with its sentences
        pair = members[0].pair if members else CandidatePair.objects.select_related("article").get(pk=pair.pk)
    documents = {m.sentence.document_id: m.sentence.document for m in members}
    sides = {}
    for side, field in ((Side.COMPLEX, "complex_document"), (Side.SIMPLE, "simple_document")):
        document = documents.get(getattr(pair, f"{field}_id")) or getattr(pair, field)
        sentences = [m.sentence for m in members if m.side == side]
        indices = [s.index for s in sentences]
        sides[side] = {"document": document.pk, "level": document.level, "indices": indices,
                       "groups": groups(indices), "sentences": [_sentence(s) for s in sentences]}
    payload = _payload(pair.pk, pair.article_id, pair.article.title, sides)
    if shown:
        payload["prediction"] = {"score": pair.score, "label": pair.predicted_label}
        payload["why"] = why_served(pair, project)
    if with_context:
        payload["context"] = context(pair)
    return payload


def why_served(pair: CandidatePair, project: Project) -> dict:
    """Why the queue picked this pair: the queue's order, the model's uncertainty, what changed
    between the runs under review, and every run's prediction of it."""
    config = project.config or {}
    why = {"order": config.get("queue_order", "corpus"), "uncertainty": pair.uncertainty,
           "predictions": [{"run": r, "method": m, "label": lab, "score": s} for r, m, lab, s in
                           pair.predictions.order_by("-run_id").values_list("run_id", "run__method", "predicted_label",
                                                                            "score")[:5]]}
    changes = config.get("queue_changes")
    if isinstance(changes, dict):
        links = dict(pair.predictions.filter(run_id__in=[changes.get("old"), changes.get("new")])
                     .values_list("run_id", "predicted_label"))
        why["change"] = {"old_run": changes.get("old"), "new_run": changes.get("new"),
                         "old": links.get(changes.get("old"), ""), "new": links.get(changes.get("new"), "")}
    return why


def context(pair: CandidatePair) -> dict:
    """The surroundings of each side: the paragraphs holding the pair's sentences plus
    ``CONTEXT_SENTENCES`` neighbours before and after, in document order."""
    result = {}
    for side, document_id, indices in ((Side.COMPLEX, pair.complex_document_id, pair.complex_indices),
                                       (Side.SIMPLE, pair.simple_document_id, pair.simple_indices)):
        if not indices:
            result[side] = []
            continue
        paragraphs = Sentence.objects.filter(document_id=document_id, index__in=indices).values("paragraph_id")
        window = Q(index__gte=min(indices) - CONTEXT_SENTENCES, index__lte=max(indices) + CONTEXT_SENTENCES)
        sentences = (Sentence.objects.filter(document_id=document_id).filter(window | Q(paragraph_id__in=paragraphs))
                     .select_related("paragraph").order_by("index"))
        result[side] = [_sentence(s, set(indices)) for s in sentences]
    return result
