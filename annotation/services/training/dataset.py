"""Training data from the project's labels (neural CRF paper §3–4; SPEC §5.1).

**Training data** (:func:`training_set`) comes from article-level splits (the export's, assigned
with the project's split policy when an article has none):

* *exhaustive article pairs* (:func:`annotation.services.review.exhaustive.exhaustive_pairs`, the
  one definition that model metrics use too) train the CRF and the pair model: document pairs an
  annotator declared complete in the whole-article view (their links; every unlinked pair = not
  aligned), and document pairs whose imported gold is exhaustive. Each pair's value is the one
  precedence rule's (:func:`annotation.services.review.gold_rule.resolve`): adjudicated gold, else the
  completers' labels (a completer who did not link a pair they left unlinked votes "not"), else
  imported gold — so a completer's label refines imported sparse gold. The CRF needs a class for
  every pair, so an undecided tie takes the stronger judgement (aligned over partial over not), and
  an imported link of unknown kind counts as aligned (a link; stored as it came);
* *pair-level labels* of the train articles' other sentence pairs (adjudicated gold, else the
  counted majority of crowd votes — quality control applied) train the pair model only.

Train articles train, dev articles stop early and tune the thresholds, test articles are only
measured. The snapshot of exactly what was used (ids, counts, a hash) is stored on the
:class:`~annotation.models.ModelVersion`.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.utils import timezone

from annotation.digest import digest
from annotation.errors import DomainError
from annotation.label_schemes import UNKNOWN_KIND
from annotation.models import (
    Adjudication,
    Article,
    CandidatePair,
    Project,
    Split,
)
from annotation.services.corpus.documents import engine_documents, pair_texts
from annotation.services.editing.links import links_from
from annotation.services.review import gold_reading
from annotation.services.review.exhaustive import ExhaustivePair, exhaustive_pairs
from annotation.services.review.gold_reading import pair_classes
from annotation.services.review.gold_rule import UNDECIDED
from workers.engine import ArticlePair

LINK = ("aligned", "partial")


class TrainingError(DomainError, ValueError):
    """Training cannot start or went wrong in a way the researcher can fix (message says how)."""


@dataclass
class TrainingSet:
    """What one training uses: exhaustive article pairs per split, pair-level examples, and a record."""

    exhaustive: dict[str, list[ArticlePair]] = field(default_factory=lambda: {"train": [], "dev": [], "test": []})
    pair_examples: list[tuple[str, str, str]] = field(default_factory=list)  # (complex, simple, class)
    snapshot: dict = field(default_factory=dict)


# --- Data --------------------------------------------------------------------------------------

def article_splits(project: Project) -> dict[int, str]:
    """Every article's split: its stored one, else the one the project's split policy plans for it."""
    from annotation.services.export import splits

    stored = dict(Split.objects.filter(article__project=project).values_list("article_id", "name"))
    missing = Article.objects.filter(project=project).exclude(pk__in=stored).exists()
    if missing:
        planned = splits.plan(project, splits.project_policy(project))
        stored.update({a: name for a, name in planned.items() if a not in stored and name})
    return stored


def resolved_labels(project: Project, pairs) -> dict[int, str]:
    """``{pair id: class}`` (aligned/partial/not): gold where there is gold, else the counted majority
    (:func:`annotation.services.review.gold_reading.pair_classes`)."""
    return pair_classes(project, pairs)


def stronger(classes: list[str]) -> str:
    """Training's answer to a tie: the strongest of the most frequent classes (aligned > partial > not)."""
    ranked = Counter(classes)
    top = max(ranked.values())
    return next(c for c in ("aligned", "partial", "not") if ranked.get(c) == top)


def exhaustive_gold(project: Project, exhaustive: Sequence[ExhaustivePair]
                    ) -> dict[tuple[int, int], tuple[dict[tuple[int, int], str], set[tuple[int, int]]]]:
    """``{(complex doc, simple doc): ({(ci, si): aligned|partial}, {undecided (ci, si)})}`` of the
    exhaustively annotated document pairs ``exhaustive``: the one gold reading
    (:mod:`annotation.services.review.gold_reading`, policy ``majority-or-single``) read as links by
    :func:`links.links_from` (a 1:1 pair decides its link; a "not aligned" there removes it). A link of
    unknown kind (imported ``aligned-or-partial``) is a link, given as ``aligned`` (the engine needs a
    class); an undecided tie is neither a link nor "not": its cells are listed apart, for the caller to
    leave out. A few queries per chunk of articles however many document pairs there are."""
    wanted = {(p.complex_document_id, p.simple_document_id) for p in exhaustive}
    found = gold_reading.read(project, "majority-or-single", articles={p.article_id for p in exhaustive})
    out: dict[tuple[int, int], tuple[dict[tuple[int, int], str], set[tuple[int, int]]]] = {}
    for key in wanted:
        doc = found.get(key)
        cells = gold_reading.cell_classes(project, doc) if doc is not None else {}
        undecided = {cell for cell, cls in cells.items() if cls == UNDECIDED}
        rows = [((ci,), (si,), "aligned" if cls == UNKNOWN_KIND else cls) for (ci, si), cls in cells.items()
                if cls != UNDECIDED]
        out[key] = ({link.key: link.label for link in links_from(rows)}, undecided)
    return out


def exhaustive_links(project: Project, exhaustive: Sequence[ExhaustivePair]
                     ) -> dict[tuple[int, int], dict[tuple[int, int], str]]:
    """``{(complex doc, simple doc): {(ci, si): aligned|partial}}``: the links of :func:`exhaustive_gold`
    (training's gold, and the gold model metrics and a run's scores are measured against)."""
    return {key: links for key, (links, _) in exhaustive_gold(project, exhaustive).items()}


def training_set(project: Project) -> TrainingSet:
    """The project's training data now (see the module docstring)."""
    split_of = article_splits(project)
    data = TrainingSet()
    covered: set[tuple[int, int]] = set()
    sources = Counter()
    used = [p for p in exhaustive_pairs(project) if split_of.get(p.article_id) in data.exhaustive]
    gold = exhaustive_gold(project, used)
    # every used document's text in two queries, not two a document pair (3,000 queries at 2,000 pairs: issue 37)
    documents = engine_documents({d for _, c, s, _, _ in used for d in (c, s)})
    for article, c, s, _, imported in used:
        split = split_of[article]
        links, undecided = gold[(c, s)]
        if undecided:  # the CRF needs a class for every sentence pair; a tie has none: left out until adjudicated
            sources["left out: undecided"] += 1
            continue
        ordered = sorted(links)
        data.exhaustive[split].append(ArticlePair(id=f"{article}:{c}-{s}", complex=documents[c], simple=documents[s],
                                                  gold=tuple(ordered), gold_labels=tuple(links[k] for k in ordered)))
        covered.add((c, s))
        sources["imported" if imported else "completed"] += 1
    train_articles = [a for a, name in split_of.items() if name == "train"]
    pairs = CandidatePair.objects.filter(article_id__in=train_articles)
    labelled = resolved_labels(project, pairs)
    texts = pair_texts(list(labelled))
    doc_pair = {pid: (c, s) for pid, c, s in CandidatePair.objects.filter(pk__in=list(texts))
                .values_list("pk", "complex_document_id", "simple_document_id")}
    for pid, value in sorted(labelled.items()):
        if pid not in texts or doc_pair[pid] in covered or value == UNKNOWN_KIND:  # pair examples need a class
            continue
        data.pair_examples.append((*texts[pid], value))
    data.snapshot = _snapshot(data, split_of, sources)
    data.snapshot["sparse_gold"] = sparse_gold(project, {(c, s) for _, c, s, _, _ in exhaustive_pairs(project)})
    return data


def sparse_gold(project: Project, exhaustive: set[tuple[int, int]]) -> int:
    """Imported gold pairs outside the ``exhaustive`` (complex, simple) document pairs: gold imported
    as sparse says which pairs are linked, not which are not, so it cannot train the CRF."""
    rows = (Adjudication.objects.filter(pair__article__project=project, provenance=Adjudication.IMPORTED)
            .values_list("pair__complex_document_id", "pair__simple_document_id"))
    return sum(1 for key in rows if key not in exhaustive)


def training_refusal(data: TrainingSet) -> str | None:
    """Why a training cannot start on ``data``, naming what is missing; None when it can."""
    if data.exhaustive["train"] or data.exhaustive["dev"]:
        return None
    nothing = "" if data.pair_examples else "nothing to train on yet: "
    sparse = data.snapshot.get("sparse_gold", 0)
    why = (f"; its {sparse} imported gold pair{'s' if sparse != 1 else ''} are sparse gold (they say which pairs are linked, "
           "not which are not)") if sparse else ""
    return (f"{nothing}the CRF needs exhaustive gold — at least one exhaustively annotated article pair (every sentence "
            f"pair decided) in a train or dev article — and this project has none{why}. Mark article pairs complete in the "
            "whole-article view, or import gold that lists every link of its articles as exhaustive.")


def _snapshot(data: TrainingSet, split_of: dict[int, str], sources: Counter) -> dict:
    exhaustive = {name: [p.id for p in pairs] for name, pairs in data.exhaustive.items()}
    return {
        "articles": dict(Counter(split_of.values())),
        "exhaustive_pairs": exhaustive,
        "exhaustive_links": {name: sum(len(p.gold or ()) for p in pairs) for name, pairs in data.exhaustive.items()},
        "exhaustive_sources": dict(sources),
        "pair_examples": len(data.pair_examples),
        "pair_example_classes": dict(Counter(v for _, _, v in data.pair_examples)),
        "hash": digest({"exhaustive": [(p.id, p.gold, p.gold_labels) for ps in data.exhaustive.values() for p in ps],
                        "pairs": data.pair_examples}, length=16),
        "taken_at": timezone.now().isoformat(),
    }


__all__ = ["LINK", "TrainingError", "TrainingSet", "article_splits", "exhaustive_gold", "exhaustive_links",
           "resolved_labels", "training_set"]
