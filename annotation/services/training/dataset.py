"""Training data from the project's labels (neural CRF paper §3–4; SPEC §5.1).

**Training data** (:func:`training_set`) comes from article-level splits (the export's, assigned
with the project's split policy when an article has none):

* *exhaustive article pairs* (:func:`annotation.services.review.exhaustive.exhaustive_pairs`, the
  one definition that model metrics use too) train the CRF and the pair model: document pairs an
  annotator declared complete in the whole-article view (their links; every unlinked pair = not
  aligned), and document pairs whose imported gold is exhaustive. Each pair's value is the one
  precedence rule's (:func:`annotation.services.review.gold.resolve`): adjudicated gold, else the
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

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.utils import timezone

from annotation.errors import DomainError
from annotation.label_schemes import UNKNOWN_KIND, value_classes
from annotation.models import (
    Adjudication,
    Article,
    CandidatePair,
    Label,
    Project,
    Split,
    key_indices,
)
from annotation.services.corpus.documents import engine_pair, pair_texts
from annotation.services.editing.links import links_from
from annotation.services.review.exhaustive import ExhaustivePair, exhaustive_pairs
from annotation.services.review.gold import UNDECIDED, Gold, pair_classes, resolve
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
    (:func:`annotation.services.review.gold.pair_classes`)."""
    return pair_classes(project, pairs)


def stronger(classes: list[str]) -> str:
    """Training's answer to a tie: the strongest of the most frequent classes (aligned > partial > not)."""
    ranked = Counter(classes)
    top = max(ranked.values())
    return next(c for c in ("aligned", "partial", "not") if ranked.get(c) == top)


def exhaustive_links(project: Project, exhaustive: Sequence[ExhaustivePair]
                     ) -> dict[tuple[int, int], dict[tuple[int, int], str]]:
    """``{(complex doc, simple doc): {(ci, si): aligned|partial}}`` of exhaustively annotated document
    pairs (each pair's class by the precedence rule, module docstring; read as links by
    :func:`links.links_from`), in three queries however many there are. Training's gold, and the gold
    model metrics and a run's scores (``run_scores``) are measured against."""
    counts_as = value_classes(project.label_scheme)
    completers = {(p.complex_document_id, p.simple_document_id): p.annotators for p in exhaustive}
    articles = sorted({p.article_id for p in exhaustive})
    pairs = [row for row in CandidatePair.objects.filter(article_id__in=articles).order_by("pk")
             .values_list("pk", "complex_document_id", "simple_document_id", "complex_key", "simple_key")
             if (row[1], row[2]) in completers]
    stored = {pid: Gold(value if value == UNDECIDED else counts_as.get(value, "not"), provenance, stored=True)
              for pid, value, provenance in Adjudication.objects.filter(pair__article_id__in=articles)
              .values_list("pair_id", "value", "provenance")}
    votes: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for pid, annotator, value in (Label.objects.filter(pair__article_id__in=articles, annotator_id__in={
            a for annotators in completers.values() for a in annotators}).values_list("pair_id", "annotator_id", "value")):
        votes[pid].append((annotator, counts_as.get(value, "not")))
    rows: dict[tuple[int, int], list[tuple[list[int], list[int], str]]] = {key: [] for key in completers}
    for pid, c, s, complex_key, simple_key in pairs:
        annotators = completers[(c, s)]
        explicit = [value for annotator, value in votes.get(pid, ()) if annotator in annotators]
        if pid not in stored and not explicit:
            continue  # nobody said anything about this candidate: unlinked, so not aligned
        # completers who left it unlinked said "not" — though only their explicit labels refine imported gold
        implicit = ["not"] * (len(annotators) - len(explicit)) if pid not in stored else []
        decided = resolve(stored.get(pid), explicit + implicit, "majority-or-single")
        if decided is None or (decided.value == UNDECIDED and not explicit + implicit):
            continue  # e.g. an imported tie nobody here decided: no link
        value = stronger(explicit + implicit) if decided.value == UNDECIDED else decided.value
        rows[(c, s)].append((key_indices(complex_key), key_indices(simple_key),
                             "aligned" if value == UNKNOWN_KIND else value))
    # as the whole-article view, completion and the export read links: a 1:1 pair decides its link
    # (a "not aligned" there removes it), an n:m pair counts for each link not so decided
    return {key: {link.key: link.label for link in links_from(found)} for key, found in rows.items()}


def training_set(project: Project) -> TrainingSet:
    """The project's training data now (see the module docstring)."""
    split_of = article_splits(project)
    data = TrainingSet()
    covered: set[tuple[int, int]] = set()
    sources = Counter()
    used = [p for p in exhaustive_pairs(project) if split_of.get(p.article_id) in data.exhaustive]
    gold = exhaustive_links(project, used)
    for article, c, s, _, imported in used:
        split = split_of[article]
        links = gold[(c, s)]
        ordered = sorted(links)
        data.exhaustive[split].append(engine_pair(c, s, id=f"{article}:{c}-{s}", gold=tuple(ordered),
                                                  gold_labels=tuple(links[k] for k in ordered)))
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
    def digest(obj) -> str:
        return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]

    exhaustive = {name: [p.id for p in pairs] for name, pairs in data.exhaustive.items()}
    return {
        "articles": dict(Counter(split_of.values())),
        "exhaustive_pairs": exhaustive,
        "exhaustive_links": {name: sum(len(p.gold or ()) for p in pairs) for name, pairs in data.exhaustive.items()},
        "exhaustive_sources": dict(sources),
        "pair_examples": len(data.pair_examples),
        "pair_example_classes": dict(Counter(v for _, _, v in data.pair_examples)),
        "hash": digest({"exhaustive": [(p.id, p.gold, p.gold_labels) for ps in data.exhaustive.values() for p in ps],
                        "pairs": data.pair_examples}),
        "taken_at": timezone.now().isoformat(),
    }


__all__ = ["LINK", "TrainingError", "TrainingSet", "article_splits", "exhaustive_links",
           "resolved_labels", "training_set"]
