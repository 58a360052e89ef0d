"""Curation of two annotators' whole-article alignments (INCEpTION-style, issue 18 §8).

A researcher picks a document pair of an article and two annotators who aligned it (A and B). Each
annotator's **judgement** of a link (complex sentence c, simple sentence s) is read from their
labels as the whole-article view reads them (:func:`links.links_from`): ``aligned`` or ``partial``
for a link they made, ``not`` for a link they explicitly labelled not aligned — or any link they did
not make once they declared the document pair complete (then unlinked = not aligned) — and
``None`` when they said nothing about it.

Every link at least one of them made (or that has gold) is one **row**, in one category:

* ``agree`` — both judged it the same (same link, same label);
* ``disagree`` — both judged it, differently (aligned vs partial, or one says not aligned);
* ``only_a`` / ``only_b`` — only one of them said anything about it;
* ``gold_only`` — neither linked it, but it has (positive) gold, e.g. imported.

The researcher decides the gold **link by link** (:func:`decide_links`): ``a`` / ``b`` (take that
annotator's judgement; where they said nothing, their version has no link: not aligned), or
``aligned`` / ``partial`` / ``not``. A decision is stored as adjudicated gold on the link's 1:1
sentence pair (created as a ``manual`` pair when nobody proposed it) through
:func:`annotation.services.review.adjudication.decide` — gold's one writer, so the pair's gold
history records it like any adjudication — and each save leaves one ``gold.curate`` audit event.
The decision's note names the two annotators by their export pseudonyms (``a<user id>``), never by
user name, since exports copy it (issue 30 item 7).

Example (categories of two judgements):
    >>> category("aligned", "aligned"), category("aligned", "not"), category(None, "partial")
    ('agree', 'disagree', 'only_b')
"""
from __future__ import annotations

from collections import Counter

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q

from annotation.errors import ListedError
from annotation.label_schemes import value_classes
from annotation.models import Adjudication, Article, ArticleCompletion, CandidatePair, Document, Label, key_indices
from annotation.services import audit
from annotation.services.alignment.run_saving import link_sentences
from annotation.services.corpus.documents import document_pair_payload
from annotation.services.editing.article_alignment import link_pair
from annotation.services.editing.links import LINK_LABELS, Link, expand, links_from
from annotation.services.editing.own_links import counts_as, scheme_values
from annotation.services.projects.pseudonyms import pseudonym
from annotation.services.review import adjudication
from annotation.services.review.gold_reading import pair_gold

AGREE, DISAGREE, ONLY_A, ONLY_B, GOLD_ONLY = "agree", "disagree", "only_a", "only_b", "gold_only"
CATEGORIES: tuple[str, ...] = (AGREE, DISAGREE, ONLY_A, ONLY_B, GOLD_ONLY)
DECISIONS: tuple[str, ...] = ("a", "b", "aligned", "partial", "not")
#: Links one save may decide.
MAX_DECISIONS = 2000


class CurationError(ListedError, ValueError):
    """A request the curation refuses (``messages`` lists every problem)."""

    code = "invalid"


def category(a: str | None, b: str | None) -> str | None:
    """The row category of two judgements (None: neither judged it)."""
    if a is None and b is None:
        return None
    if a == b:
        return AGREE
    if a is None:
        return ONLY_B
    if b is None:
        return ONLY_A
    return DISAGREE


# --- Reading -----------------------------------------------------------------------------------

def _labels(user, complex_doc: Document, simple_doc: Document):
    return (Label.objects.filter(annotator=user, pair__complex_document=complex_doc, pair__simple_document=simple_doc)
            .values_list("pair__complex_key", "pair__simple_key", "value"))


def judgements(user, complex_doc: Document, simple_doc: Document, counts: dict) -> tuple[dict[tuple[int, int], str], bool]:
    """The user's judgement of each link they said something about (``aligned``/``partial``/``not``)
    and whether they declared the document pair complete (then every other link is ``not``)."""
    rows = [(key_indices(c), key_indices(s), counts.get(value)) for c, s, value in _labels(user, complex_doc, simple_doc)]
    said: dict[tuple[int, int], str] = {}
    for c, s, klass in rows:
        if klass == "not":
            for link in expand(c, s, "not"):
                if len(c) == 1 and len(s) == 1 or link.key not in said:
                    said[link.key] = "not"
    said.update({link.key: link.label for link in links_from(rows)})
    complete = ArticleCompletion.objects.filter(annotator=user, complex_document=complex_doc,
                                                simple_document=simple_doc).exists()
    return said, complete


def _judgement(said: dict, complete: bool, key: tuple[int, int]) -> str | None:
    return said.get(key, "not" if complete else None)


def gold_links(complex_doc: Document, simple_doc: Document, classes: dict) -> dict[tuple[int, int], dict]:
    """The gold of each link of the document pair — its 1:1 pair's value by the one precedence rule
    (:func:`annotation.services.review.gold_reading.pair_gold`: adjudication, else the counted votes, else
    imported gold; a tie as ``undecided``), else the value of an n:m pair covering it (positive values count
    for each of its links). ``{"label": class, "value", "provenance", "reviewer"}``."""
    pairs = CandidatePair.objects.filter(complex_document=complex_doc, simple_document=simple_doc)
    decided = pair_gold(complex_doc.article.project, pairs, ties=True)  # a tie shows as undecided
    reviewers = dict(Adjudication.objects.filter(pair__in=pairs).values_list("pair_id", "reviewer__username"))
    own: dict[tuple[int, int], dict] = {}
    spread: dict[tuple[int, int], dict] = {}
    for pid, c, s in pairs.filter(pk__in=list(decided)).values_list("pk", "complex_key", "simple_key"):
        c, s, value = key_indices(c), key_indices(s), decided[pid]
        gold = {"label": classes.get(value.value, value.value), "value": value.value, "provenance": value.provenance,
                "reviewer": reviewers.get(pid) if value.stored else None}
        if len(c) == 1 and len(s) == 1:
            own[(c[0], s[0])] = gold
        elif gold["label"] != "not":
            for link in expand(c, s, "aligned"):
                spread.setdefault(link.key, gold)
    return {**spread, **own}


def annotators(article: Article, complex_doc: Document, simple_doc: Document) -> list[dict]:
    """Who aligned the document pair (labels on it or a completion), with how many links they made
    and whether they declared it complete; by username."""
    users = get_user_model().objects.filter(
        Q(labels__pair__complex_document=complex_doc, labels__pair__simple_document=simple_doc)
        | Q(completions__complex_document=complex_doc, completions__simple_document=simple_doc)).distinct()
    counts = counts_as(article.project.label_scheme)
    out = []
    for user in users.order_by("username"):
        said, complete = judgements(user, complex_doc, simple_doc, counts)
        out.append({"username": user.get_username(), "links": sum(v in LINK_LABELS for v in said.values()),
                    "complete": complete})
    return out


def resolve_annotator(article: Article, complex_doc: Document, simple_doc: Document, username: str | None, name: str):
    """The user ``username`` who aligned the document pair; CurationError otherwise."""
    if not username:
        raise CurationError(f"{name}: choose an annotator who aligned this pair of versions")
    user = get_user_model().objects.filter(username=username).first()
    known = {row["username"] for row in annotators(article, complex_doc, simple_doc)}
    if user is None or username not in known:
        raise CurationError(f"{name}: {username!r} has not aligned this pair of versions"
                            + (f" (who has: {', '.join(sorted(known))})" if known else " (nobody has yet)"))
    return user


def rows(a_said: dict, a_complete: bool, b_said: dict, b_complete: bool, gold: dict) -> list[dict]:
    """One row per link either annotator made or with positive gold, sorted by sentences."""
    keys = {k for k, v in a_said.items() if v in LINK_LABELS} | {k for k, v in b_said.items() if v in LINK_LABELS}
    keys |= {k for k, g in gold.items() if g["label"] != "not"}
    out = []
    for key in sorted(keys):
        a, b = _judgement(a_said, a_complete, key), _judgement(b_said, b_complete, key)
        out.append({"complex": key[0], "simple": key[1], "category": category(a, b) or GOLD_ONLY, "a": a, "b": b,
                    "gold": gold.get(key)})
    return out


def curation_state(article: Article, complex_doc: Document, simple_doc: Document, a_user=None, b_user=None) -> dict:
    """What the curation page shows: both documents, who aligned them, and — with two annotators —
    every row (link) with its category, both judgements and its gold, and counts per category
    (``decided``: rows whose gold a reviewer adjudicated)."""
    scheme = article.project.label_scheme
    values = scheme_values(scheme)
    payload = {**document_pair_payload(article, complex_doc, simple_doc),
               "annotators": annotators(article, complex_doc, simple_doc),
               "labels": {k: v for k, v in values.items() if v is not None},
               "a": None, "b": None, "rows": [], "counts": dict.fromkeys(CATEGORIES, 0)}
    if a_user is None or b_user is None:
        return payload
    counts = counts_as(scheme)
    a_said, a_complete = judgements(a_user, complex_doc, simple_doc, counts)
    b_said, b_complete = judgements(b_user, complex_doc, simple_doc, counts)
    table = rows(a_said, a_complete, b_said, b_complete, gold_links(complex_doc, simple_doc, value_classes(scheme)))
    tally = Counter(row["category"] for row in table)
    payload.update(
        a={"username": a_user.get_username(), "complete": a_complete},
        b={"username": b_user.get_username(), "complete": b_complete},
        rows=table,
        counts={**{c: tally.get(c, 0) for c in CATEGORIES},
                "decided": sum(1 for r in table if r["gold"] and r["gold"]["provenance"] == Adjudication.ADJUDICATED)})
    return payload


# --- Deciding ----------------------------------------------------------------------------------

def _parse(raw, n_complex: int, n_simple: int) -> list[tuple[int, int, str]]:
    if not isinstance(raw, list) or not raw:
        raise CurationError("'decisions' must be a non-empty list of {complex, simple, decision}")
    if len(raw) > MAX_DECISIONS:
        raise CurationError(f"at most {MAX_DECISIONS} decisions per save")
    problems, out, seen = [], [], set()
    for n, item in enumerate(raw, start=1):
        if not isinstance(item, dict):
            problems.append(f"decision {n}: must be an object with complex, simple and decision")
            continue
        c, s, decision = item.get("complex"), item.get("simple"), item.get("decision")
        for name, value, count in (("complex", c, n_complex), ("simple", s, n_simple)):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < count:
                problems.append(f"decision {n}: {name} must be a sentence index 0–{count - 1}, got {value!r}")
        if decision not in DECISIONS:
            problems.append(f"decision {n}: decision must be one of {', '.join(DECISIONS)}, got {decision!r}")
        if (c, s) in seen:
            problems.append(f"decision {n}: link C{c} → S{s} is decided twice")
        seen.add((c, s))
        out.append((c, s, decision))
    if problems:
        raise CurationError(problems)
    return out


def decide_links(article: Article, complex_doc: Document, simple_doc: Document, a_user, b_user, decisions, reviewer,
                 *, note: str = "") -> dict:
    """Store the reviewer's decisions ``[{"complex": c, "simple": s, "decision": one of DECISIONS}]``
    as adjudicated gold of each link's 1:1 pair (module docstring). All or nothing; returns
    ``{"decided": n, "changed": n}`` (changed: decisions that changed the link's gold value)."""
    scheme = article.project.label_scheme
    values = scheme_values(scheme)
    parsed = _parse(decisions, complex_doc.sentences.count(), simple_doc.sentences.count())
    counts = counts_as(scheme)
    said = {"a": judgements(a_user, complex_doc, simple_doc, counts), "b": judgements(b_user, complex_doc, simple_doc, counts)}
    names = {"a": a_user.get_username(), "b": b_user.get_username()}  # for the audit log (researchers only)
    aliases = {"a": pseudonym(a_user.pk), "b": pseudonym(b_user.pk)}  # for the note, which exports copy
    problems, plan = [], []
    for c, s, decision in parsed:
        klass = decision if decision not in ("a", "b") else (_judgement(*said[decision], (c, s)) or "not")
        if values.get(klass) is None:
            problems.append(f"C{c} → S{s}: the project's label scheme has no {klass!r} value")
        plan.append((Link(c, s), decision, klass))
    if problems:
        raise CurationError(problems)
    changed = 0
    with transaction.atomic():
        pairs = []
        for link, decision, klass in plan:
            pair, _ = link_pair(article, complex_doc, simple_doc, link)
            pairs.append(pair)
            before = Adjudication.objects.filter(pair=pair).values_list("value", flat=True).first()
            why = f"curation of {aliases['a']} (A) and {aliases['b']} (B): " + (
                f"accepted {decision.upper()} ({aliases[decision]})" if decision in ("a", "b") else f"set {klass}")
            adjudication.decide(pair, values[klass], reviewer, f"{why}. {note}".strip() if note else why)
            changed += before != values[klass]
        link_sentences(pairs)
        audit.record("gold.curate", actor=reviewer, project=article.project, target=f"article #{article.pk} {article.title}"[:300],
                     complex=complex_doc.level, simple=simple_doc.level, a=names["a"], b=names["b"],
                     decided=len(plan), changed=changed)
    return {"decided": len(plan), "changed": changed}
