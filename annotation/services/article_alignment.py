"""Whole-article alignment: an annotator's n:m links between two versions of an article.

The view shows a complex and a simple document side by side with the current alignment: the
annotator's own links when they have labelled pairs of this document pair, otherwise the links
predicted by an alignment run (blind annotation: annotators see the model's links only when the
project's config has ``"show_predictions": true``; researchers always see them).

A link is a group: a set of complex sentences and a set of simple sentences (n:m); a sentence is in
at most one link. Saving turns the annotator's links into labels, through ``labelling.submit_label``:

* every link becomes the project's sentence pair of those sentence sets (origin ``manual`` when
  nobody proposed it before; an existing pair, predicted or imported, is reused) labelled with
  the scheme value that counts as ``aligned`` or ``partial``;
* every other pair in scope — the shown run's predicted pairs and the pairs the annotator labelled
  before — that is not contained in one of the links gets the scheme value that counts as ``not``:
  the correction is recorded on the model's pair, and a link removed since the last save stops
  being one. A pair contained in a link (e.g. a 1:1 pair inside an n:m link) is left as it is,
  unless this annotator had labelled it ``not``: then it takes the link's label.

Labels whose value would not change are not rewritten, so saving twice writes nothing the second
time. QC applies as for any label: an excluded annotator is refused, and ``seconds`` (time on the
page before saving, given to every label written) must reach the project's minimum.

Example:
    >>> components([((0,), (0,), "aligned"), ((0,), (1,), "partial"), ((2,), (3,), "aligned")])
    [Link(complex=(0,), simple=(0, 1), label='partial'), Link(complex=(2,), simple=(3,), label='aligned')]
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Q

from ..models import (
    AlignmentRun,
    Article,
    CandidatePair,
    Document,
    Label,
    LabelScheme,
    Prediction,
    Project,
    Status,
    indices_key,
)
from ..permissions import can_research
from . import qc
from .alignment_runs import document_pairs, link_sentences
from .labelling import ARTICLE, submit_label

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
    found: dict[str, str | None] = {"aligned": None, "partial": None, "not": None}
    for v in scheme.values:
        kind = v.get("counts_as")
        if kind in found and found[kind] is None:
            found[kind] = v["value"]
    missing = [k for k in ("aligned", "not") if found[k] is None]
    if missing:
        raise AlignmentInputError(f"the label scheme {scheme.name!r} has no value counting as {' or '.join(missing)}")
    return found


# --- Reading links -----------------------------------------------------------------------------

def components(groups: Iterable[tuple[Iterable[int], Iterable[int], str]]) -> list[Link]:
    """Merge groups sharing a sentence into disjoint links (connected components); a merged link is
    ``partial`` when any of its groups is."""
    parent: dict[tuple[str, int], tuple[str, int]] = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    partial_nodes = set()
    for complex_indices, simple_indices, label in groups:
        nodes = [("c", i) for i in complex_indices] + [("s", j) for j in simple_indices]
        if not nodes:
            continue
        root = find(nodes[0])
        for node in nodes[1:]:
            parent[find(node)] = root
        if label == "partial":
            partial_nodes.add(nodes[0])
    members: dict[tuple[str, int], list[tuple[str, int]]] = {}
    for node in list(parent):
        members.setdefault(find(node), []).append(node)
    roots_partial = {find(n) for n in partial_nodes}
    links = []
    for root, nodes in members.items():
        c = tuple(sorted(i for side, i in nodes if side == "c"))
        s = tuple(sorted(i for side, i in nodes if side == "s"))
        if c and s:
            links.append(Link(c, s, "partial" if root in roots_partial else "aligned"))
    return sorted(links, key=lambda link: (link.complex[0], link.simple[0]))


def _pairs(complex_doc: Document, simple_doc: Document):
    return CandidatePair.objects.filter(complex_document=complex_doc, simple_document=simple_doc)


def model_links(run: AlignmentRun | None, complex_doc: Document, simple_doc: Document) -> list[Link]:
    """The run's predicted (aligned/partial) pairs of this document pair, as disjoint links."""
    if run is None:
        return []
    rows = (Prediction.objects.filter(run=run, pair__complex_document=complex_doc, pair__simple_document=simple_doc,
                                      predicted_label__in=LINK_LABELS)
            .values_list("pair__complex_key", "pair__simple_key", "predicted_label"))
    return components((_indices_of(c), _indices_of(s), label) for c, s, label in rows)


def _indices_of(key: str) -> list[int]:
    return [int(i) for i in key.split(",") if i]


def _counts_as(scheme: LabelScheme) -> dict[str, str]:
    return {v["value"]: v.get("counts_as", "") for v in scheme.values} if scheme.kind == LabelScheme.CATEGORICAL else {}


def own_links(user, complex_doc: Document, simple_doc: Document, scheme: LabelScheme) -> list[Link] | None:
    """The links the user's labels on this document pair make (None when the user has no label here)."""
    labels = list(Label.objects.filter(annotator=user, pair__complex_document=complex_doc, pair__simple_document=simple_doc)
                  .select_related("pair"))
    if not labels:
        return None
    counts = _counts_as(scheme)
    return components((lab.pair.complex_indices, lab.pair.simple_indices, counts.get(lab.value))
                      for lab in labels if counts.get(lab.value) in LINK_LABELS)


def document_payload(doc: Document) -> dict:
    paragraphs: list[dict] = []
    for index, paragraph, text in doc.sentences.order_by("index").values_list("index", "paragraph__index", "text"):
        if not paragraphs or paragraphs[-1]["index"] != paragraph:
            paragraphs.append({"index": paragraph, "sentences": []})
        paragraphs[-1]["sentences"].append({"index": index, "text": text})
    return {"id": doc.pk, "level": doc.level, "paragraphs": paragraphs,
            "sentence_count": sum(len(p["sentences"]) for p in paragraphs)}


def load_alignment(user, article: Article, complex_doc: Document, simple_doc: Document, run: AlignmentRun | None) -> dict:
    """What the whole-article view shows: both documents, the links and where they come from."""
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
        "article": {"id": article.pk, "title": article.title, "project": project.pk},
        "complex": document_payload(complex_doc),
        "simple": document_payload(simple_doc),
        "versions": [{"id": d.pk, "level": d.level} for d in article.documents.order_by("rank")],
        "run": {"id": run.pk, "method": run.method} if run is not None else None,
        "runs": [{"id": r.pk, "method": r.method} for r in prediction_runs(project)[:20]] if visible else [],
        "show_predictions": visible,
        "source": source,
        "links": [link.as_dict() for link in links],
        "model_links": [link.as_dict() for link in predicted],
        "scheme": {"kind": scheme.kind, "values": scheme.values},
        "min_seconds": qc.qc_config(project).min_seconds,
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


def _manual_pair(article: Article, complex_doc: Document, simple_doc: Document, link: Link) -> tuple[CandidatePair, bool]:
    keys = {"complex_key": indices_key(link.complex), "simple_key": indices_key(link.simple)}
    try:
        with transaction.atomic():
            return CandidatePair.objects.get_or_create(
                complex_document=complex_doc, simple_document=simple_doc, **keys,
                defaults={"article": article, "origin": "manual"},
            )
    except IntegrityError:  # created concurrently by another request
        return CandidatePair.objects.get(complex_document=complex_doc, simple_document=simple_doc, **keys), False


def save_links(user, article: Article, complex_doc: Document, simple_doc: Document, run: AlignmentRun | None,
               raw_links, *, seconds: float = 0.0) -> dict:
    """Store the user's alignment of the document pair as labels (see the module docstring).

    Returns counts: ``links``, ``pairs_created``, ``labels_written`` and ``not_aligned`` (pairs
    labelled not aligned by this save). Raises AlignmentInputError for invalid links and
    ``qc.QualityControlError`` when quality control refuses the labels; nothing is written then.
    """
    project = article.project
    values = scheme_values(project.label_scheme)
    links = parse_links(raw_links, complex_doc.sentences.count(), simple_doc.sentences.count(),
                        has_partial=values["partial"] is not None)
    qc.ensure_not_excluded(user, project)
    qc.check_seconds(qc.qc_config(project), float(seconds))
    counts = _counts_as(project.label_scheme)
    written = not_aligned = created_pairs = 0
    with transaction.atomic():
        manual: list[tuple[CandidatePair, Link]] = []
        for link in links:
            pair, created = _manual_pair(article, complex_doc, simple_doc, link)
            created_pairs += created
            manual.append((pair, link))
        link_sentences(pair for pair, _ in manual)
        pairs = _pairs(complex_doc, simple_doc)
        mine = dict(Label.objects.filter(annotator=user, pair__in=pairs).values_list("pair_id", "value"))
        for pair, link in manual:
            want = values[link.label]
            if mine.get(pair.pk) != want:
                submit_label(user, pair, value=want, seconds=seconds, source=ARTICLE, change=True)
                written += 1
        scope = Q(pk__in=list(mine))
        if run is not None:
            scope |= Q(predictions__run=run, predictions__predicted_label__in=LINK_LABELS)
        keep = {pair.pk for pair, _ in manual}
        for pair in pairs.filter(scope).exclude(pk__in=keep).select_related("article__project"):
            inside = next((link for link in links if link.contains(pair.complex_indices, pair.simple_indices)), None)
            if inside is not None:
                # within a link: an earlier "not aligned" from this annotator no longer holds
                if counts.get(mine.get(pair.pk)) == "not":
                    submit_label(user, pair, value=values[inside.label], seconds=seconds, source=ARTICLE, change=True)
                    written += 1
            elif mine.get(pair.pk) != values["not"]:
                submit_label(user, pair, value=values["not"], seconds=seconds, source=ARTICLE, change=True)
                written += 1
                not_aligned += 1
    return {"links": len(links), "pairs_created": created_pairs, "labels_written": written, "not_aligned": not_aligned}
