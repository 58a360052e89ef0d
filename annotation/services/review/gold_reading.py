"""The ONE reading of the gold (issue 34): everything that decides a document pair's gold, gathered
in one place and read by the one rule (:func:`annotation.services.review.gold_rule.resolve`).

Every consumer — each export format and its preview, the manifest and README counts, run scores, the training set and
model metrics, calibration, hidden test questions, agreement, the curation and adjudication pages, the dashboard, the
client's ``gold()`` — reads gold through :func:`read` (or :func:`pair_gold`, built on it). No other module queries
votes, completions, adjudications or imported gold to decide gold (``tests/test_repository_gold.py``).

What decides a sentence pair (a cell) of a document pair:

* its **stored adjudication** (adjudicated in-house, automatic, or imported with its meaning);
* its **counted votes** (:func:`counted_labels`: no test answers, no excluded annotators), from the queue or the
  whole-article view;
* each **completion** of the document pair (an annotator declared it complete in the whole-article view; excluded
  annotators do not count): a completer who gave the cell no label **votes "not"** on it (the scheme's first "not"
  value) — an implied not, a vote like any other. It counts against imported gold too: a completer saw the imported
  links and left this one unlinked;
* **imported gold** with its meaning: an import declared exhaustive makes every cell it does not list not aligned
  (:func:`~annotation.services.review.exhaustive.imported_exhaustive`).

The rule (first match wins): adjudicated (or automatic) gold; else the votes, explicit and implied, as the policy
reads them (``majority``: ≥ 2 votes; ``single``: exactly 1; ``majority-or-single``: either; ``stored``: none) — a
qualifying tie is **undecided** (never aligned, never not aligned; it waits in adjudication, imported gold or not);
else imported gold; else the cell has no value and is **left out** with its reason (:data:`REASONS`).

A document pair is **exhaustive under a policy** when every cell without evidence has a value: it was imported as
exhaustive, or its completions qualify under the policy (``majority``: ≥ 2 completers; ``single``: exactly 1;
``majority-or-single``: ≥ 1; ``stored``: never) — those cells are then :attr:`DocumentGold.rest` (not aligned,
provenance ``completed`` or ``imported``). So an article completed by one annotator is exhaustive under
``majority-or-single`` (their links, their implied nots) and not under ``majority``: there each of their links is
left out (``one vote``), never written as not aligned.

Gathered per chunk of articles in five queries (adjudications, counted votes within the chunk's pair ids, completions,
imported meaning, the pairs' keys), never a query per pair.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from django.db.models import QuerySet

from annotation.label_schemes import class_values, value_classes
from annotation.models import Adjudication, ArticleCompletion, CandidatePair, Label, Membership, Project
from annotation.services.review.exhaustive import imported_exhaustive
from annotation.services.review.gold_rule import TIE, UNDECIDED, Gold, _check, qualifies, resolve

DocKey = tuple[int, int]
CHUNK = 200
COMPLETED = "completed"
"""Provenance of a cell the completers' implied nots decide (no label on it from anyone)."""
REASONS = {"one vote": "one vote, and the policy needs at least two (majority)",
           "several votes": "more than one vote, and the policy takes single votes only",
           "votes only": "only votes, and the policy reads stored gold only", "tie": "the votes tie: undecided, waiting in adjudication"}
"""Why a cell with evidence has no value (or is undecided) under a policy."""


@dataclass
class DocumentGold:
    """One document pair's gold under one policy.

    ``pairs``: each candidate pair with evidence and a value (ties included, as :data:`UNDECIDED`);
    ``left_out``: each candidate pair with evidence and no value, with its reason (a key of
    :data:`REASONS`); ``rest``: the value of every other cell (implied not aligned), None when the
    document pair is not exhaustive under the policy; ``keys``: each pair's (complex, simple) keys."""

    article_id: int
    complex_document_id: int
    simple_document_id: int
    completers: tuple[int, ...] = ()
    imported_exhaustive: bool = False
    pairs: dict[int, Gold] = field(default_factory=dict)
    left_out: dict[int, str] = field(default_factory=dict)
    rest: Gold | None = None
    keys: dict[int, tuple[str, str]] = field(default_factory=dict)

    @property
    def key(self) -> DocKey:
        return self.complex_document_id, self.simple_document_id

    @property
    def exhaustive(self) -> bool:
        """Every cell has a value (or is an undecided tie) under the policy."""
        return self.rest is not None

    @property
    def undecided(self) -> set[int]:
        return {pid for pid, g in self.pairs.items() if g.value == UNDECIDED}


def counted_labels(project: Project) -> QuerySet[Label]:
    """The labels that count as votes (gold, agreement, adjudication, training, export): the project's
    labels minus hidden test answers and minus every label of an excluded annotator."""
    return (Label.objects.filter(pair__article__project=project, is_test_question=False)
            .exclude(annotator_id__in=Membership.objects.excluded(project)))


def decide(stored: Gold | None, votes: list[str], policy: str) -> tuple[Gold | None, str | None]:
    """A cell's value by the rule and, when it has none, why (a key of :data:`REASONS`)."""
    gold = resolve(stored, votes, policy)
    if gold is not None:
        return gold, "tie" if gold.value == UNDECIDED else None
    if not votes:
        return None, None
    if policy == "stored":
        return None, "votes only"
    return None, "one vote" if len(votes) == 1 else "several votes"


def rest_of(completers: int, imported: bool, policy: str, not_value: str) -> Gold | None:
    """The value of a document pair's cells nobody labelled: not aligned when its completions qualify
    under ``policy`` or its imported gold is exhaustive, else None (not exhaustive)."""
    if policy != "stored" and completers and qualifies(completers, policy):
        return Gold(not_value, COMPLETED)
    return Gold(not_value, Adjudication.IMPORTED) if imported else None


def not_value(project: Project) -> str:
    """The scheme value an implied not is (the first value that counts as "not")."""
    return class_values(project.label_scheme).get("not", "not")


def _articles_of(project: Project, articles: Iterable[int] | None, imported: set[tuple[int, int, int]]) -> list[int]:
    """``articles``, or (None) every article of the project with evidence: a label, a stored gold value, a
    completion or imported exhaustive gold — the others hold no document pair :func:`read` returns, and at a
    million pairs reading them in chunks took seconds for nothing (issue 37)."""
    if articles is not None:
        return sorted(set(articles))
    ids = {a for a, _, _ in imported}
    ids.update(Label.objects.filter(pair__article__project=project).order_by().values_list("pair__article_id", flat=True)
               .distinct())
    ids.update(Adjudication.objects.filter(pair__article__project=project).order_by()
               .values_list("pair__article_id", flat=True).distinct())
    ids.update(ArticleCompletion.objects.filter(article__project=project).order_by()
               .values_list("article_id", flat=True).distinct())
    return sorted(ids)


def read(project: Project, policy: str = "majority-or-single", *, articles: Iterable[int] | None = None,
         reviewers: dict[int, str] | None = None, votes_only: bool = False) -> dict[DocKey, DocumentGold]:
    """``{(complex doc, simple doc): DocumentGold}`` of the project's document pairs with any evidence
    or completion (of ``articles`` only, when given), under ``policy`` (module docstring).
    ``reviewers``: user id → the name to give stored gold's reviewer (the export's pseudonyms);
    ``votes_only``: what the votes alone (explicit and implied) give, no stored gold read (automatic gold writes that)."""
    out: dict[DocKey, DocumentGold] = {}
    for found in read_chunks(project, policy, articles=articles, reviewers=reviewers, votes_only=votes_only):
        out.update(found)
    return out


def read_chunks(project: Project, policy: str = "majority-or-single", *, articles: Iterable[int] | None = None,
                reviewers: dict[int, str] | None = None, chunk: int = CHUNK,
                votes_only: bool = False) -> Iterator[dict[DocKey, DocumentGold]]:
    """:func:`read`, a chunk of ``chunk`` articles at a time (bounded memory on a large project)."""
    _check(policy)
    imported = set() if votes_only else imported_exhaustive(project)
    ids = _articles_of(project, articles, imported)
    implied = not_value(project)
    for start in range(0, len(ids), chunk):
        yield _read(project, policy, ids[start:start + chunk], imported, implied, reviewers, votes_only)


def read_policies(project: Project, policies: Iterable[str], *, articles: Iterable[int] | None = None,
                  reviewers: dict[int, str] | None = None) -> dict[str, dict[DocKey, DocumentGold]]:
    """:func:`read` under each of ``policies`` (``{policy: {doc key: DocumentGold}}``), the evidence queried
    once for all of them (the export preview reads every policy: issue 37)."""
    policies = list(dict.fromkeys(policies))
    for policy in policies:
        _check(policy)
    ids = _articles_of(project, articles, imported := imported_exhaustive(project))
    implied = not_value(project)
    out: dict[str, dict[DocKey, DocumentGold]] = {p: {} for p in policies}
    for start in range(0, len(ids), CHUNK):
        found = _gather(project, ids[start:start + CHUNK], imported, reviewers, False)
        for policy in policies:
            out[policy].update(_decide(found, policy, implied))
    return out


@dataclass
class _Evidence:
    """What decides a chunk's gold, gathered once (:func:`_gather`) and decided under a policy (:func:`_decide`)."""

    stored: dict[int, Gold]
    votes: dict[int, list[tuple[int, str]]]
    completers: dict[DocKey, list[int]]
    article_of: dict[DocKey, int]
    exhaustive: set[DocKey]
    pairs: list[tuple[int, int, int, int, str, str]]  # the pairs with evidence: (pk, article, c, s, keys)


def _read(project: Project, policy: str, ids: list[int], imported: set[tuple[int, int, int]], implied: str,
          reviewers: dict[int, str] | None, votes_only: bool = False) -> dict[DocKey, DocumentGold]:
    return _decide(_gather(project, ids, imported, reviewers, votes_only), policy, implied)


def _gather(project: Project, ids: list[int], imported: set[tuple[int, int, int]], reviewers: dict[int, str] | None,
            votes_only: bool) -> _Evidence:
    stored: dict[int, Gold] = {}
    adjudications = Adjudication.objects.none() if votes_only else Adjudication.objects.filter(pair__article_id__in=ids)
    for pid, value, provenance, reviewer_id in adjudications.values_list("pair_id", "value", "provenance",
                                                                          "reviewer_id"):
        who = (reviewers or {}).get(reviewer_id) if reviewer_id else None
        stored[pid] = Gold(value, provenance, stored=True, reviewer=who)
    chunk_pairs = list(CandidatePair.objects.filter(article_id__in=ids).order_by("pk").values_list(
        "pk", "article_id", "complex_document_id", "simple_document_id", "complex_key", "simple_key"))
    votes: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for pid, annotator, value in (counted_labels(project).filter(pair__article_id__in=ids, **pair_bounds(chunk_pairs))
                                  .values_list("pair_id", "annotator_id", "value")):
        if value:
            votes[pid].append((annotator, value))
    completers: dict[DocKey, list[int]] = defaultdict(list)
    article_of: dict[DocKey, int] = {}
    for article, c, s, annotator in (ArticleCompletion.objects.filter(article_id__in=ids)
                                     .exclude(annotator_id__in=Membership.objects.excluded(project))
                                     .values_list("article_id", "complex_document_id", "simple_document_id",
                                                  "annotator_id")):
        completers[(c, s)].append(annotator)
        article_of[(c, s)] = article
    chunk_ids = set(ids)
    exhaustive = {(c, s) for a, c, s in imported if a in chunk_ids}
    for a, c, s in imported:
        if a in chunk_ids:
            article_of.setdefault((c, s), a)
    evidence = stored.keys() | votes.keys()
    pairs = [row for row in chunk_pairs if row[0] in evidence]
    return _Evidence(stored, votes, completers, article_of, exhaustive, pairs)


def pair_bounds(pairs: list[tuple]) -> dict[str, int]:
    """``pair_id`` bounds of a chunk's pairs (rows in id order; {} without any): the same labels, read from the index's
    range, not a scan of every label per chunk (issue 37: 0.2–0.5 s a chunk at 1.3M labels, 0.03 s bounded)."""
    return {"pair_id__gte": pairs[0][0], "pair_id__lte": pairs[-1][0]} if pairs else {}


def _decide(found: _Evidence, policy: str, implied: str) -> dict[DocKey, DocumentGold]:
    stored, votes, completers, exhaustive = found.stored, found.votes, found.completers, found.exhaustive
    docs: dict[DocKey, DocumentGold] = {}
    for key in completers.keys() | exhaustive:
        docs[key] = DocumentGold(found.article_of[key], *key, completers=tuple(sorted(completers.get(key, ()))),
                                 imported_exhaustive=key in exhaustive)
        docs[key].rest = rest_of(len(completers.get(key, ())), key in exhaustive, policy, implied)
    for pid, article, c, s, complex_key, simple_key in found.pairs:
        doc = docs.get((c, s))
        if doc is None:
            doc = docs[(c, s)] = DocumentGold(article, c, s)
        doc.keys[pid] = (complex_key, simple_key)
        explicit = votes.get(pid, [])
        voters = {a for a, _ in explicit}
        cell = [v for _, v in explicit] + [implied for a in doc.completers if a not in voters]
        # inside a document pair imported as exhaustive, a cell the file does not list and nobody labelled
        # is imported "not"; one somebody labelled has the value their votes give, or none (left out)
        imported_not = Gold(implied, Adjudication.IMPORTED) if doc.imported_exhaustive and not explicit else None
        gold, reason = decide(stored.get(pid) or imported_not, cell, policy)
        if gold is None:
            doc.left_out[pid] = reason or "votes only"
        else:
            doc.pairs[pid] = gold
    return docs


def exhaustive_documents(project: Project, policy: str = "majority-or-single") -> set[DocKey]:
    """``{(complex doc, simple doc)}`` exhaustive under ``policy`` (module docstring): imported as
    exhaustive, or completed by enough annotators for the policy. Two queries, no pair read."""
    _check(policy)
    out = {(c, s) for _, c, s in imported_exhaustive(project)}
    if policy == "stored":
        return out
    count: dict[DocKey, int] = defaultdict(int)
    for c, s in (ArticleCompletion.objects.filter(article__project=project)
                 .exclude(annotator_id__in=Membership.objects.excluded(project))
                 .values_list("complex_document_id", "simple_document_id")):
        count[(c, s)] += 1
    return out | {key for key, n in count.items() if qualifies(n, policy)}


def completion_effect(complex_document: int, simple_document: int) -> dict[str, int]:
    """What an empty completion of the document pair overrules and what it does not: ``imported_links``
    (imported gold that links a pair there: a completer's implied not outweighs it) and ``adjudicated``
    (pairs with adjudicated or automatic gold, which keep it)."""
    from annotation.label_schemes import POSITIVE_CLASSES

    rows = (Adjudication.objects.filter(pair__complex_document_id=complex_document,
                                        pair__simple_document_id=simple_document)
            .values_list("provenance", "value", "pair__article__project_id"))
    imported = adjudicated = 0
    classes: dict[int, dict] = {}
    for provenance, value, project_id in rows:
        if provenance != Adjudication.IMPORTED:
            adjudicated += 1
            continue
        if project_id not in classes:
            classes[project_id] = value_classes(Project.objects.get(pk=project_id).label_scheme)
        imported += classes[project_id].get(value) in POSITIVE_CLASSES
    return {"imported_links": imported, "adjudicated": adjudicated}


def pair_values(project: Project, policy: str = "majority-or-single", *, articles: Iterable[int] | None = None,
                ties: bool = False) -> dict[int, Gold]:
    """``{pair id: Gold}`` of every candidate pair with evidence and a value (ties only with ``ties``)."""
    out: dict[int, Gold] = {}
    for found in read_chunks(project, policy, articles=articles):
        for doc in found.values():
            out.update((pid, g) for pid, g in doc.pairs.items() if ties or g.value != UNDECIDED)
    return out


def cell_classes(project: Project, doc: DocumentGold) -> dict[tuple[int, int], str]:
    """``{(complex sentence, simple sentence): class}`` of the cells the document pair's pairs decide
    (an n:m pair stands for each of its cells; a 1:1 pair decides its cell over an n:m one), ties as
    :data:`UNDECIDED`; cells not listed take :attr:`DocumentGold.rest` (or have no value)."""
    from annotation.models import key_indices

    classes = value_classes(project.label_scheme)
    single: dict[tuple[int, int], str] = {}
    wide: dict[tuple[int, int], str] = {}
    for pid, gold in doc.pairs.items():
        complex_key, simple_key = doc.keys[pid]
        cls = UNDECIDED if gold.value == UNDECIDED else classes.get(gold.value, "not")
        c_ids, s_ids = key_indices(complex_key), key_indices(simple_key)
        target = single if len(c_ids) == 1 and len(s_ids) == 1 else wide
        for ci in c_ids:
            for si in s_ids:
                if target is wide and wide.get((ci, si)) in ("aligned", "partial", "aligned-or-partial"):
                    continue
                target[(ci, si)] = cls
    return {**wide, **single}


def pair_gold(project: Project, pairs, *, policy: str = "majority-or-single", ties: bool = False) -> dict[int, Gold]:
    """``{pair id: Gold}`` of the project's ``pairs`` (a queryset or ids) that have a value under
    ``policy`` (:func:`~annotation.services.review.gold_rule.resolve` over what :func:`pair_values` gathers,
    completions' implied nots included); pairs without any are left out, and so are ties unless ``ties``."""
    _check(policy)
    rows = (CandidatePair.objects.filter(article__project=project, pk__in=pairs).order_by()
            .values_list("pk", "article_id"))
    ids, articles = set(), set()
    for pk, article_id in rows:  # one query for both
        ids.add(pk)
        articles.add(article_id)
    if not articles:
        return {}
    return {pid: g for pid, g in pair_values(project, policy, articles=articles, ties=ties).items() if pid in ids}


def pair_classes(project: Project, pairs, *, policy: str = "majority-or-single",
                 default: str | None = "not") -> dict[int, str]:
    """``{pair id: class}`` of the pairs with gold under ``policy`` (see :func:`pair_gold`); a gold
    value outside the scheme, or without a class, counts as ``default`` (None: the pair is left out)."""
    classes = value_classes(project.label_scheme, default)
    out = {pid: classes.get(gold.value, default) for pid, gold in pair_gold(project, pairs, policy=policy).items()}
    return {pid: cls for pid, cls in out.items() if cls is not None}


__all__ = ["COMPLETED", "REASONS", "TIE", "DocumentGold", "cell_classes", "completion_effect", "counted_labels",
           "decide", "exhaustive_documents", "not_value", "pair_bounds", "pair_classes", "pair_gold", "pair_values", "read",
           "read_chunks", "read_policies", "rest_of"]
