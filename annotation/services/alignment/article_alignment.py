"""Whole-article alignment: an annotator's n:m links between two versions of an article.

The view shows a complex and a simple document side by side with the current alignment: the
annotator's own links when they have labelled pairs of this document pair, otherwise the links
predicted by an alignment run (blind annotation: annotators see the model's links only when the
project's config has ``"show_predictions": true``; researchers always see them).

A link is a group: a set of complex sentences and a set of simple sentences (n:m); a sentence is in
at most one link. **Saving** records what the annotator judged, and nothing else, through
``labelling.submit_label`` (``source="article"``, explicit changes):

* every link becomes the project's sentence pair of those sentence sets — an existing pair
  (predicted, imported, mined) is reused, a new one gets origin ``manual`` — labelled with the
  scheme value counting as ``aligned`` or ``partial``;
* a model link the annotator saw and removed (the client lists it in ``removed``) gives "not
  aligned" to the run's predicted pairs inside it that no link of theirs still contains;
* an earlier link of the annotator's own (a pair they labelled aligned/partial) that no current
  link contains any more was removed since their last save: it becomes "not aligned" too.

Pairs the annotator did not judge — model links they never saw or left alone, candidates, other
people's pairs — get no label: an unlinked pair means "not aligned" only once the annotator
declares the document pair **complete** (:func:`mark_complete`, stored with who, when and the time
spent; :func:`reopen` withdraws it). :func:`complete_article_pairs` reads those exhaustively
annotated document pairs with their links (what CRF training uses).

Labels whose value would not change are not rewritten, so saving twice writes nothing the second
time. An excluded annotator is refused; the per-item minimum time does not apply (an article is not
a queue item): the save's ``seconds`` (time on the page since it was opened or last saved) are
shared out over the labels it writes, so summing label times counts them once.

Example:
    >>> components([((0,), (0,), "aligned"), ((0,), (1,), "partial"), ((2,), (3,), "aligned")])
    [Link(complex=(0,), simple=(0, 1), label='partial'), Link(complex=(2,), simple=(3,), label='aligned')]
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.db import IntegrityError, transaction

from annotation.models import (
    AlignmentRun,
    Article,
    ArticleCompletion,
    CandidatePair,
    Document,
    Label,
    LabelScheme,
    Prediction,
    Project,
    Status,
    indices_key,
    key_indices,
)
from annotation.permissions import can_research
from annotation.services.alignment.alignment_runs import document_pairs, link_sentences
from annotation.services.corpus.documents import document_pair_payload
from annotation.services.review import qc
from annotation.services.review.gold import class_values, value_classes
from annotation.services.review.labelling import ARTICLE, MAX_SECONDS, submit_label
from workers.engine.grouping import connected_groups

LINK_LABELS: tuple[str, ...] = ("aligned", "partial")
CANDIDATE_RUN_METHOD = "candidates"  # runs holding candidates, not predictions (services.paragraph_correction)


class AlignmentInputError(ValueError):
    """Invalid input; ``messages`` lists every problem found (shown to the annotator)."""

    def __init__(self, messages: list[str] | str):
        self.messages = [messages] if isinstance(messages, str) else list(messages)
        super().__init__("; ".join(self.messages))


@dataclass(frozen=True)
class Link:
    """An n:m link: sorted complex and simple sentence indices, and its label (aligned/partial)."""

    complex: tuple[int, ...]
    simple: tuple[int, ...]
    label: str = "aligned"

    def as_dict(self) -> dict:
        return {"complex": list(self.complex), "simple": list(self.simple), "label": self.label}

    def contains(self, complex_indices: Iterable[int], simple_indices: Iterable[int]) -> bool:
        return set(complex_indices) <= set(self.complex) and set(simple_indices) <= set(self.simple)


# --- Choosing what to show ---------------------------------------------------------------------

def resolve_documents(article: Article, complex_id: int | None, simple_id: int | None) -> tuple[Document, Document]:
    """The two versions to align: the given document ids, or the article's first adjacent level pair."""
    docs = {d.pk: d for d in article.documents.order_by("rank")}
    problems = [f"{name}: document {pk} is not a version of this article ({', '.join(f'{d.pk} = {d.level}' for d in docs.values())})"
                for name, pk in (("complex", complex_id), ("simple", simple_id)) if pk is not None and pk not in docs]
    if problems:
        raise AlignmentInputError(problems)
    pairs = document_pairs(article, [])
    if complex_id is None and simple_id is None:
        if not pairs:
            raise AlignmentInputError("this article has fewer than two versions: there is nothing to align")
        return pairs[0]
    if complex_id is None or simple_id is None:
        given = docs[complex_id if complex_id is not None else simple_id]
        for c, s in pairs:
            if given in (c, s):
                return c, s
        raise AlignmentInputError("give both complex and simple document ids")
    if complex_id == simple_id:
        raise AlignmentInputError("complex and simple must be two different versions")
    return docs[complex_id], docs[simple_id]


def prediction_runs(project: Project):
    """Succeeded runs whose pairs are predictions (not the candidate runs of paragraph correction)."""
    return project.runs.filter(status=Status.SUCCEEDED).exclude(method=CANDIDATE_RUN_METHOD).order_by("-created_at", "-pk")


def resolve_run(project: Project, run_id: int | None) -> AlignmentRun | None:
    """The given run of the project, or its latest succeeded prediction run (None if there is none)."""
    if run_id is None:
        return prediction_runs(project).first()
    run = project.runs.filter(pk=run_id).first()
    if run is None:
        raise AlignmentInputError(f"run: run {run_id} does not belong to this project")
    return run


def shows_predictions(user, project: Project) -> bool:
    return can_research(user, project) or bool((project.config or {}).get("show_predictions"))


def scheme_values(scheme: LabelScheme) -> dict[str, str | None]:
    """The first value of the scheme counting as aligned, partial and not (partial may be None)."""
    if scheme.kind != LabelScheme.CATEGORICAL:
        raise AlignmentInputError(f"the project's label scheme {scheme.name!r} has no aligned / not-aligned values: "
                                  "the whole-article view needs a categorical scheme")
    first = class_values(scheme)
    found: dict[str, str | None] = {kind: first.get(kind) for kind in ("aligned", "partial", "not")}
    missing = [k for k in ("aligned", "not") if found[k] is None]
    if missing:
        raise AlignmentInputError(f"the label scheme {scheme.name!r} has no value counting as {' or '.join(missing)}")
    return found


# --- Reading links -----------------------------------------------------------------------------

def components(groups: Iterable[tuple[Iterable[int], Iterable[int], str]]) -> list[Link]:
    """Merge groups sharing a sentence into disjoint links (connected components, by the engine's
    :func:`~workers.engine.grouping.connected_groups`); a merged link is ``partial`` when any of its
    groups is."""
    groups = list(groups)
    return [Link(comp.complex, comp.simple,
                 "partial" if any(groups[k][2] == "partial" for k in comp.members) else "aligned")
            for comp in connected_groups((c, s) for c, s, _ in groups) if comp.complex and comp.simple]


def _pairs(complex_doc: Document, simple_doc: Document):
    return CandidatePair.objects.filter(complex_document=complex_doc, simple_document=simple_doc)


def model_links(run: AlignmentRun | None, complex_doc: Document, simple_doc: Document) -> list[Link]:
    """The run's predicted (aligned/partial) pairs of this document pair, as disjoint links."""
    if run is None:
        return []
    rows = (Prediction.objects.filter(run=run, pair__complex_document=complex_doc, pair__simple_document=simple_doc,
                                      predicted_label__in=LINK_LABELS)
            .values_list("pair__complex_key", "pair__simple_key", "predicted_label"))
    return components((key_indices(c), key_indices(s), label) for c, s, label in rows)


def _counts_as(scheme: LabelScheme) -> dict[str, str | None]:
    return value_classes(scheme) if scheme.kind == LabelScheme.CATEGORICAL else {}


def own_links(user, complex_doc: Document, simple_doc: Document, scheme: LabelScheme) -> list[Link] | None:
    """The links the user's labels on this document pair make (None when the user has no label here)."""
    labels = list(Label.objects.filter(annotator=user, pair__complex_document=complex_doc, pair__simple_document=simple_doc)
                  .select_related("pair"))
    if not labels:
        return None
    counts = _counts_as(scheme)
    return components((lab.pair.complex_indices, lab.pair.simple_indices, counts.get(lab.value))
                      for lab in labels if counts.get(lab.value) in LINK_LABELS)


def load_alignment(user, article: Article, complex_doc: Document, simple_doc: Document, run: AlignmentRun | None) -> dict:
    """What the whole-article view shows: both documents, the links and where they come from, the
    model's links (when the user may see them: the client reports the ones it showed and the
    annotator removed) and whether the document pair is complete."""
    project = article.project
    visible = shows_predictions(user, project)
    predicted = model_links(run, complex_doc, simple_doc) if visible else []
    mine = own_links(user, complex_doc, simple_doc, project.label_scheme)
    if mine is not None:
        links, source = mine, "own"
    elif visible and run is not None:
        links, source = predicted, "model"
    else:
        links, source = [], "empty"
    scheme = project.label_scheme
    return {
        **document_pair_payload(article, complex_doc, simple_doc),
        "run": {"id": run.pk, "method": run.method} if run is not None else None,
        "runs": [{"id": r.pk, "method": r.method} for r in prediction_runs(project)[:20]] if visible else [],
        "show_predictions": visible,
        "source": source,
        "links": [link.as_dict() for link in links],
        "model_links": [link.as_dict() for link in predicted],
        "scheme": {"kind": scheme.kind, "values": scheme.values},
        **completion_state(user, project, complex_doc, simple_doc),
    }


# --- Saving links ------------------------------------------------------------------------------

def _indices(raw, name: str, where: str, count: int, problems: list[str]) -> tuple[int, ...]:
    if not isinstance(raw, list) or not raw:
        problems.append(f"{where}: '{name}' must be a non-empty list of sentence indices")
        return ()
    out = set()
    for value in raw:
        if isinstance(value, bool) or not isinstance(value, int):
            problems.append(f"{where}: {name} sentence {value!r} is not an integer index")
        elif not 0 <= value < count:
            problems.append(f"{where}: {name} sentence {value} is out of range (the {name} document has {count} "
                            f"sentences, 0–{count - 1})" if count else f"{where}: the {name} document has no sentences")
        else:
            out.add(value)
    return tuple(sorted(out))


def parse_links(raw, n_complex: int, n_simple: int, *, has_partial: bool = True) -> list[Link]:
    """Validate ``[{"complex": [..], "simple": [..], "label": "aligned"|"partial"}, ...]``.

    Raises:
        AlignmentInputError: listing every problem (bad shape, index out of range, unknown label,
            overlapping links — a sentence may be in one link only).
    """
    if not isinstance(raw, list):
        raise AlignmentInputError("'links' must be a list of {complex, simple, label} objects")
    problems: list[str] = []
    links: list[Link] = []
    owner: dict[tuple[str, int], int] = {}
    for n, item in enumerate(raw, start=1):
        where = f"link {n}"
        if not isinstance(item, dict):
            problems.append(f"{where}: must be an object with 'complex', 'simple' and 'label'")
            continue
        c = _indices(item.get("complex"), "complex", where, n_complex, problems)
        s = _indices(item.get("simple"), "simple", where, n_simple, problems)
        label = item.get("label", "aligned")
        if label not in LINK_LABELS:
            problems.append(f"{where}: label {label!r} is not one of: {', '.join(LINK_LABELS)}")
            continue
        if label == "partial" and not has_partial:
            problems.append(f"{where}: this project's label scheme has no 'partial' value")
            continue
        for side, indices in (("complex", c), ("simple", s)):
            for i in indices:
                first = owner.setdefault((side, i), n)
                if first != n:
                    problems.append(f"links {first} and {n} overlap: both contain {side} sentence {i} "
                                    "(a sentence can be in one link only; make one n:m link instead)")
        if c and s:
            links.append(Link(c, s, label))
    if problems:
        raise AlignmentInputError(problems)
    return links


def parse_removed(raw, n_complex: int, n_simple: int) -> list[Link]:
    """Validate the removed model links ``[{"complex": [..], "simple": [..]}, ...]`` (None = none).

    Raises:
        AlignmentInputError: listing every problem (bad shape, index out of range).
    """
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise AlignmentInputError("'removed' must be a list of {complex, simple} objects: the model's links you removed")
    problems: list[str] = []
    removed: list[Link] = []
    for n, item in enumerate(raw, start=1):
        where = f"removed link {n}"
        if not isinstance(item, dict):
            problems.append(f"{where}: must be an object with 'complex' and 'simple'")
            continue
        c = _indices(item.get("complex"), "complex", where, n_complex, problems)
        s = _indices(item.get("simple"), "simple", where, n_simple, problems)
        if c and s:
            removed.append(Link(c, s, "aligned"))
    if problems:
        raise AlignmentInputError(problems)
    return removed


def _manual_pair(article: Article, complex_doc: Document, simple_doc: Document, link: Link) -> tuple[CandidatePair, bool]:
    """The project's sentence pair of ``link`` (reused when anyone proposed it before), or a new
    ``manual`` one."""
    keys = {"complex_key": indices_key(link.complex), "simple_key": indices_key(link.simple)}
    try:
        with transaction.atomic():
            pair, created = CandidatePair.objects.get_or_create(
                complex_document=complex_doc, simple_document=simple_doc, **keys,
                defaults={"article": article, "origin": "manual"},
            )
    except IntegrityError:  # created concurrently by another request
        pair, created = CandidatePair.objects.get(complex_document=complex_doc, simple_document=simple_doc, **keys), False
    pair.article = article  # saves submit_label a query per pair
    return pair, created


@dataclass
class SavePlan:
    """The labels one save writes: ``writes`` maps pair id → (pair, value); ``not_aligned`` the
    pair ids among them that become "not aligned"."""

    writes: dict[int, tuple[CandidatePair, str]] = field(default_factory=dict)
    not_aligned: set[int] = field(default_factory=set)
    pairs_created: int = 0


def _plan(user, article: Article, complex_doc: Document, simple_doc: Document, run: AlignmentRun | None,
          links: list[Link], removed: list[Link], values: dict[str, str | None]) -> SavePlan:
    """Decide what a save writes (module docstring), creating the links' missing pairs."""
    plan = SavePlan()
    counts = _counts_as(article.project.label_scheme)
    mine = dict(Label.objects.filter(annotator=user, pair__complex_document=complex_doc,
                                     pair__simple_document=simple_doc).values_list("pair_id", "value"))
    linked: list[CandidatePair] = []
    for link in links:
        pair, created = _manual_pair(article, complex_doc, simple_doc, link)
        plan.pairs_created += created
        linked.append(pair)
        want = values[link.label]
        if mine.get(pair.pk) != want:
            plan.writes[pair.pk] = (pair, want)
    link_sentences(linked)

    def still_linked(pair: CandidatePair) -> bool:
        return any(link.contains(pair.complex_indices, pair.simple_indices) for link in links)

    def not_aligned(pair: CandidatePair) -> None:
        if pair.pk not in plan.writes and mine.get(pair.pk) != values["not"] and not still_linked(pair):
            pair.article = article
            plan.writes[pair.pk] = (pair, values["not"])
            plan.not_aligned.add(pair.pk)

    # the annotator's own earlier links that no current link contains: removed since the last save
    own = [pk for pk, value in mine.items() if counts.get(value) in LINK_LABELS]
    for pair in CandidatePair.objects.filter(pk__in=own).order_by("pk"):
        not_aligned(pair)
    # the model's links the annotator saw and removed: the run's predicted pairs inside them
    if removed and run is not None:
        predicted = (CandidatePair.objects.filter(complex_document=complex_doc, simple_document=simple_doc,
                                                  predictions__run=run, predictions__predicted_label__in=LINK_LABELS)
                     .order_by("pk"))
        for pair in predicted:
            if any(group.contains(pair.complex_indices, pair.simple_indices) for group in removed):
                not_aligned(pair)
    return plan


def save_links(user, article: Article, complex_doc: Document, simple_doc: Document, run: AlignmentRun | None,
               raw_links, *, removed=None, seconds: float = 0.0) -> dict:
    """Store the user's alignment of the document pair as labels (see the module docstring).

    ``raw_links`` are the links on screen; ``removed`` the model links of ``run`` the annotator was
    shown and removed (the only model pairs this labels "not aligned"); ``seconds`` the time on the
    page since it was opened or last saved, shared out over the labels written.

    Returns counts: ``links``, ``pairs_created``, ``labels_written`` and ``not_aligned`` (labels of
    this save that say not aligned). Raises AlignmentInputError for invalid input and
    ``qc.AnnotatorExcluded`` for an excluded annotator; nothing is written then.
    """
    project = article.project
    values = scheme_values(project.label_scheme)
    n_complex, n_simple = complex_doc.sentences.count(), simple_doc.sentences.count()
    links = parse_links(raw_links, n_complex, n_simple, has_partial=values["partial"] is not None)
    removed_links = parse_removed(removed, n_complex, n_simple)
    if removed_links and not shows_predictions(user, project):
        raise AlignmentInputError("removed: this project does not show you the model's links, so there are none to remove")
    if removed_links and run is None:
        raise AlignmentInputError("removed: there is no alignment run whose links you could have removed")
    seconds = _checked_seconds(seconds)
    qc.ensure_not_excluded(user, project)
    with transaction.atomic():
        plan = _plan(user, article, complex_doc, simple_doc, run, links, removed_links, values)
        share = min(seconds / len(plan.writes), MAX_SECONDS) if plan.writes else 0.0
        for pair, value in plan.writes.values():
            submit_label(user, pair, value=value, seconds=share, source=ARTICLE, change=True)
    return {"links": len(links), "pairs_created": plan.pairs_created, "labels_written": len(plan.writes),
            "not_aligned": len(plan.not_aligned)}


def _checked_seconds(seconds) -> float:
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds < 0:
        raise AlignmentInputError("'seconds' must be a non-negative number")
    return float(seconds)


# --- Completion ----------------------------------------------------------------------------------

def _completion_dict(completion: ArticleCompletion) -> dict:
    return {"annotator": completion.annotator.get_username(), "completed_at": completion.completed_at.isoformat(),
            "seconds": round(completion.seconds, 1)}


def completion_state(user, project: Project, complex_doc: Document, simple_doc: Document) -> dict:
    """``completion``: the user's own completion of the document pair (None while open);
    ``completions``: everyone's for researchers, the user's own for annotators (blind to others)."""
    rows = (ArticleCompletion.objects.filter(complex_document=complex_doc, simple_document=simple_doc)
            .select_related("annotator").order_by("completed_at", "pk"))
    if not can_research(user, project):
        rows = rows.filter(annotator=user)
    rows = list(rows)
    own = next((c for c in rows if c.annotator_id == user.pk), None)
    return {"completion": _completion_dict(own) if own else None, "completions": [_completion_dict(c) for c in rows]}


def mark_complete(user, article: Article, complex_doc: Document, simple_doc: Document, *,
                  seconds: float = 0.0) -> tuple[ArticleCompletion, bool]:
    """Declare the user's alignment of the document pair exhaustive: from now on every pair they did
    not link counts as not aligned. Returns (completion, created); marking it again keeps the first
    declaration. ``seconds``: time the annotator spent on the page (capped at a day).

    Raises AlignmentInputError when the project's scheme has no aligned/not values, and
    ``qc.AnnotatorExcluded`` for an excluded annotator.
    """
    scheme_values(article.project.label_scheme)
    seconds = min(_checked_seconds(seconds), MAX_SECONDS)
    qc.ensure_not_excluded(user, article.project)
    try:
        with transaction.atomic():
            return ArticleCompletion.objects.get_or_create(
                complex_document=complex_doc, simple_document=simple_doc, annotator=user,
                defaults={"article": article, "seconds": seconds})
    except IntegrityError:  # marked concurrently (a double click)
        return ArticleCompletion.objects.get(complex_document=complex_doc, simple_document=simple_doc, annotator=user), False


def reopen(user, complex_doc: Document, simple_doc: Document) -> bool:
    """Withdraw the user's completion of the document pair (their labels stay); False if it was open."""
    deleted, _ = ArticleCompletion.objects.filter(complex_document=complex_doc, simple_document=simple_doc,
                                                  annotator=user).delete()
    return bool(deleted)


@dataclass(frozen=True)
class CompletedPair:
    """A document pair an annotator declared complete, with their links: every sentence pair of the
    two documents outside ``links`` is not aligned."""

    article_id: int
    complex_document: Document
    simple_document: Document
    annotator_id: int
    annotator: str
    links: list[Link]
    completed_at: datetime
    seconds: float


def complete_article_pairs(project: Project) -> list[CompletedPair]:
    """The project's exhaustively annotated document pairs, one per (document pair, annotator), in
    article order, with the annotator's current links (their aligned/partial labels, as the
    whole-article view shows them). Three queries whatever the size."""
    completions = list(ArticleCompletion.objects.filter(article__project=project)
                       .select_related("complex_document", "simple_document", "annotator")
                       .order_by("article_id", "complex_document__rank", "simple_document__rank", "annotator_id"))
    if not completions:
        return []
    counts = _counts_as(project.label_scheme)
    link_values = [value for value, kind in counts.items() if kind in LINK_LABELS]
    groups: dict[tuple[int, int, int], list[tuple[list[int], list[int], str]]] = defaultdict(list)
    rows = (Label.objects.filter(pair__article_id__in={c.article_id for c in completions},
                                 annotator_id__in={c.annotator_id for c in completions}, value__in=link_values)
            .values_list("annotator_id", "pair__complex_document_id", "pair__simple_document_id",
                         "pair__complex_key", "pair__simple_key", "value"))
    for annotator_id, complex_id, simple_id, complex_key, simple_key, value in rows:
        groups[(complex_id, simple_id, annotator_id)].append((key_indices(complex_key), key_indices(simple_key),
                                                              counts[value]))
    return [CompletedPair(article_id=c.article_id, complex_document=c.complex_document, simple_document=c.simple_document,
                          annotator_id=c.annotator_id, annotator=c.annotator.get_username(),
                          links=components(groups.get((c.complex_document_id, c.simple_document_id, c.annotator_id), [])),
                          completed_at=c.completed_at, seconds=c.seconds)
            for c in completions]
