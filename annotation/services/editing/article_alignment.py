"""Whole-article alignment: an annotator's per-link alignment of two versions of an article.

The view shows a complex and a simple document side by side with the current alignment: the
annotator's own links when they have labelled pairs of this document pair, otherwise the links
predicted by an alignment run (blind annotation: annotators see the model's links only when the
project's config has ``"show_predictions": true``; researchers always see them).

**Links are per link** (:mod:`annotation.services.editing.links`): each complex–simple sentence link
carries its own label (aligned/partial) and is stored as the annotator's label on the project's
1:1 sentence pair of those sentences (reused when it exists, else a new ``manual`` pair); a sentence
may be in several links; splits, fusions and n:m groups are derived (``groups`` in the payload). A
run's predicted n:m pair is shown as its complex × simple links, each with the pair's label.

**Saving** (``save_links``) records what this tab changed, and nothing else, through
``labelling.submit_label`` (``source="article"``, explicit changes):

* every link on screen is labelled with the scheme value counting as its label (unchanged labels
  are not rewritten, so saving twice writes nothing the second time);
* every link in ``removed`` — the links this tab loaded (its own or the model's) and removed — is
  labelled "not aligned" on its 1:1 pair. Nothing else is ever written as "not aligned": links the
  tab never showed, candidates, other people's pairs get no label.

**Safe tabs.** The load returns ``version`` (:func:`links.version`: it changes with every write of
the annotator's labels on the document pair). A save may send the version it is based on; when the
labels changed since (another tab, the queue, an undo) the save raises :class:`AlignmentConflict`
(409: nothing written) with the current links and what changed between the links the tab loaded
(``base``) and now, and the page asks: keep mine / take theirs / merge.

Pairs the annotator did not judge mean "not aligned" only once the annotator declares the document
pair **complete** (``mark_complete``/``reopen`` in :mod:`annotation.services.editing.completion`,
whose :func:`complete_article_pairs` reads those exhaustively annotated document pairs with their
links). An excluded annotator is refused; the save's ``seconds`` (time on the page since it was
opened or last saved) are shared out over the labels it writes.
"""
from __future__ import annotations

from django.db import IntegrityError, transaction

from annotation.models import AlignmentRun, Article, ArticleCompletion, CandidatePair, Document, Label, Prediction, Project
from annotation.models.alignment import indices_key, key_indices
from annotation.models.jobs import Status
from annotation.permissions import can_research
from annotation.services.alignment.paragraph_alignment import CANDIDATE_RUN_METHOD
from annotation.services.alignment.run_saving import link_sentences
from annotation.services.alignment.run_work import document_pairs
from annotation.services.corpus.documents import document_pair_payload
from annotation.services.editing.links import (
    LINK_LABELS,
    AlignmentInputError,
    Link,
    diff,
    groups,
    links_from,
    parse_links,
    version,
)
from annotation.services.editing.own_links import (
    EmptyCompletion,
    checked_seconds,
    not_aligned_if_completed,
    own_links,
    scheme_values,
)
from annotation.services.review import annotator
from annotation.services.review.label_input import MAX_SECONDS, LabelInput
from annotation.services.review.labelling import ARTICLE, submit_label


class AlignmentConflict(Exception):
    """The save is based on an older version of the annotator's links: nothing was written.
    ``version``/``links``: the current state; ``changes``: :func:`links.diff` from the links the tab
    loaded to the current ones (None when the save did not say what it loaded)."""

    def __init__(self, version: str, links: list[Link], changes: dict | None):
        self.version, self.links, self.changes = version, links, changes
        super().__init__("your links of this article pair were changed elsewhere (another tab?) since this page loaded them")


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


# --- Reading links -----------------------------------------------------------------------------

def model_links(run: AlignmentRun | None, complex_doc: Document, simple_doc: Document) -> list[Link]:
    """The run's predicted (aligned/partial) pairs of this document pair, as per-link links."""
    if run is None:
        return []
    rows = (Prediction.objects.filter(run=run, pair__complex_document=complex_doc, pair__simple_document=simple_doc,
                                      predicted_label__in=LINK_LABELS)
            .values_list("pair__complex_key", "pair__simple_key", "predicted_label"))
    return links_from((key_indices(c), key_indices(s), label) for c, s, label in rows)


def load_alignment(user, article: Article, complex_doc: Document, simple_doc: Document, run: AlignmentRun | None) -> dict:
    """What the whole-article view shows: both documents, the per-link links and where they come from,
    their derived ``groups``, the ``version`` a save must be based on, the model's links (when the
    user may see them) and whether the document pair is complete."""
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
        "run": {"id": run.pk, "method": run.method} if run is not None and visible else None,  # blind: no run
        "runs": [{"id": r.pk, "method": r.method} for r in prediction_runs(project)[:20]] if visible else [],
        "show_predictions": visible,
        "source": source,
        "version": version(user, complex_doc, simple_doc),
        "links": [link.as_dict() for link in links],
        "groups": [group.as_dict() for group in groups(links)],
        "model_links": [link.as_dict() for link in predicted],
        "scheme": {"kind": scheme.kind, "values": scheme.values},
        **completion_state(user, project, complex_doc, simple_doc),
    }


# --- Saving links ------------------------------------------------------------------------------

def link_pair(article: Article, complex_doc: Document, simple_doc: Document, link: Link) -> tuple[CandidatePair, bool]:
    """The project's 1:1 sentence pair of ``link`` (reused when anyone proposed it before), or a new
    ``manual`` one."""
    keys = {"complex_key": indices_key((link.complex,)), "simple_key": indices_key((link.simple,))}
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


def _check_version(user, project: Project, complex_doc: Document, simple_doc: Document, based_on: str | None,
                   base) -> None:
    """Raise AlignmentConflict when the user's labels changed since the version ``based_on``."""
    if based_on is None:
        return
    if not isinstance(based_on, str):
        raise AlignmentInputError("'version' must be the version string the page loaded")
    now = version(user, complex_doc, simple_doc)
    if now == based_on:
        return
    current = own_links(user, complex_doc, simple_doc, project.label_scheme) or []
    n_complex, n_simple = complex_doc.sentences.count(), simple_doc.sentences.count()
    try:
        loaded = parse_links(base, n_complex, n_simple, name="base") if base is not None else None
    except AlignmentInputError:
        loaded = None
    raise AlignmentConflict(now, current, diff(loaded, current) if loaded is not None else None)


def save_links(user, article: Article, complex_doc: Document, simple_doc: Document, run: AlignmentRun | None,
               raw_links, *, removed=None, seconds: float = 0.0, based_on: str | None = None, base=None,
               allow_empty: bool = False) -> dict:
    """Store the user's per-link alignment of the document pair as labels (module docstring).

    ``raw_links``: the links on screen; ``removed``: the links this tab loaded and removed (the only
    ones labelled "not aligned"); ``seconds``: the time on the page since it was opened or last
    saved, shared out over the labels written; ``based_on``: the ``version`` the tab loaded (None:
    no check) and ``base`` the links it loaded (to report what changed in a conflict).

    Returns counts (``links``, ``pairs_created``, ``labels_written``, ``not_aligned``) and the new
    ``version``. Raises AlignmentInputError for invalid input, AlignmentConflict for a stale
    version, ``qc.AnnotatorExcluded`` for an excluded annotator and ``completion.EmptyCompletion``
    when the save would leave a document pair the user declared complete without any link (every
    pair of it "not aligned": the question marking it complete asks, asked again; ``allow_empty``
    confirms); nothing is written then.
    """
    from annotation.services.review.gold_reading import completion_effect

    project = article.project
    values = scheme_values(project.label_scheme)
    n_complex, n_simple = complex_doc.sentences.count(), simple_doc.sentences.count()
    links = parse_links(raw_links, n_complex, n_simple, has_partial=values["partial"] is not None)
    gone = parse_links(removed, n_complex, n_simple, name="removed", labelled=False)
    both = sorted({link.key for link in links} & {link.key for link in gone})
    if both:
        raise AlignmentInputError([f"removed: link C{c} → S{s} is both on screen and removed" for c, s in both])
    seconds = checked_seconds(seconds)
    actor = annotator.of(user, project)
    actor.ensure_may_label()
    with transaction.atomic():
        Document.objects.select_for_update().filter(pk=complex_doc.pk).first()  # one save of this pair at a time
        _check_version(user, project, complex_doc, simple_doc, based_on, base)
        mine = dict(Label.objects.filter(annotator=user, pair__complex_document=complex_doc,
                                         pair__simple_document=simple_doc).values_list("pair_id", "value"))
        writes: dict[int, tuple[CandidatePair, str]] = {}
        created = not_aligned = 0
        touched: list[CandidatePair] = []
        for link, value in [(link, values[link.label]) for link in links] + [(link, values["not"]) for link in gone]:
            pair, new = link_pair(article, complex_doc, simple_doc, link)
            created += new
            touched.append(pair)
            if mine.get(pair.pk) != value:
                writes[pair.pk] = (pair, value)
                not_aligned += value == values["not"]
        link_sentences(touched)
        share = min(seconds / len(writes), MAX_SECONDS) if writes else 0.0
        for pair, value in writes.values():
            submit_label(actor, pair, LabelInput.parse(project.label_scheme, value=value, seconds=share, change=True),
                         ARTICLE)
        if (not allow_empty and writes and not own_links(user, complex_doc, simple_doc, project.label_scheme)
                and ArticleCompletion.objects.filter(complex_document=complex_doc, simple_document=simple_doc,
                                                     annotator=user).exists()):
            raise EmptyCompletion(not_aligned_if_completed(user, complex_doc, simple_doc),  # rolls the save back
                                  completion_effect(complex_doc.pk, simple_doc.pk), saving=True)
    return {"links": len(links), "pairs_created": created, "labels_written": len(writes), "not_aligned": not_aligned,
            "version": version(user, complex_doc, simple_doc)}


# --- Completion state (declaring, reopening: services.editing.completion) ----------------------

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
