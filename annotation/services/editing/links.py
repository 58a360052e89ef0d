"""Per-link alignments: the public model of what an annotator links in an article pair.

A **link** is one complex sentence and one simple sentence with its own label (``aligned`` or
``partial``), as the annotation guidelines ask: a split complex sentence is linked to each simple
piece, each link labelled on its own; a fusion links each complex sentence to the simple one. A
sentence may be in any number of links. Every link is stored as the annotator's label on the
project's **1:1 sentence pair** of those two sentences (one ``CandidatePair`` per link).

**Groups** (1:1, split, fusion, n:m) are never stored: they are derived from the links as the
connected components of the link graph (:func:`groups`, by the engine's ``connected_groups``), for
display and export. A group's label is the links' label when they agree, else ``mixed``.

Reading labels or predictions stored on n:m pairs (queue labels of an n:m candidate, a run's
predicted n:m groups): the label of an n:m pair counts for **each** of its complex × simple links
(:func:`expand`); where the same link also has a label of its own on its 1:1 pair, that label wins
(an explicit "not aligned" on the 1:1 pair removes the link); among several n:m pairs covering one
link, ``aligned`` wins (as the training set reads them).

This module is free of database access except :func:`version` (a cheap query); the curation view
and anything else comparing alignments use :class:`Link`, :func:`groups` and :func:`diff`.

Example:
    >>> [g.kind for g in groups([Link(0, 0), Link(0, 1, "partial"), Link(2, 3)])]
    ['split', '1:1']
    >>> diff([Link(0, 0), Link(1, 1)], [Link(0, 0, "partial"), Link(2, 2)])["relabelled"]
    [{'complex': [0], 'simple': [0], 'from': 'aligned', 'to': 'partial'}]
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from annotation.errors import ListedError
from workers.engine import connected_groups

LINK_LABELS: tuple[str, ...] = ("aligned", "partial")


class AlignmentInputError(ListedError, ValueError):
    """Invalid input; ``messages`` lists every problem found (shown to the annotator)."""


@dataclass(frozen=True, order=True)
class Link:
    """One complex–simple sentence link (sentence indices) and its label (aligned/partial)."""

    complex: int
    simple: int
    label: str = "aligned"

    @property
    def key(self) -> tuple[int, int]:
        return (self.complex, self.simple)

    def as_dict(self) -> dict:
        """The API/engine form: ``{"complex": [c], "simple": [s], "label": ..}``."""
        return {"complex": [self.complex], "simple": [self.simple], "label": self.label}


@dataclass(frozen=True)
class Group:
    """A derived n:m group: the sentences of a connected component of links and the links."""

    complex: tuple[int, ...]
    simple: tuple[int, ...]
    links: tuple[Link, ...]

    @property
    def kind(self) -> str:
        """``1:1``, ``split`` (one complex, several simple), ``fusion`` (several complex, one simple) or ``n:m``."""
        if len(self.complex) == 1:
            return "1:1" if len(self.simple) == 1 else "split"
        return "fusion" if len(self.simple) == 1 else "n:m"

    @property
    def label(self) -> str:
        labels = {link.label for link in self.links}
        return labels.pop() if len(labels) == 1 else "mixed"

    def as_dict(self) -> dict:
        return {"complex": list(self.complex), "simple": list(self.simple), "kind": self.kind, "label": self.label,
                "links": [link.as_dict() for link in self.links]}


def groups(links: Iterable[Link]) -> list[Group]:
    """The n:m groups the links make (connected components), sorted by their sentences."""
    links = sorted(links)
    return [Group(comp.complex, comp.simple, tuple(links[k] for k in comp.members))
            for comp in connected_groups(((link.complex,), (link.simple,)) for link in links)]


def expand(complex_indices: Iterable[int], simple_indices: Iterable[int], label: str) -> list[Link]:
    """The complex × simple links of an n:m pair, each with the pair's label."""
    simple = sorted(set(simple_indices))
    return [Link(c, s, label) for c in sorted(set(complex_indices)) for s in simple]


def links_from(rows: Iterable[tuple[Iterable[int], Iterable[int], str | None]], *,
               linking: Iterable[str] = LINK_LABELS) -> list[Link]:
    """The links of labelled (or predicted) pairs ``(complex indices, simple indices, class)``;
    a class in ``linking`` (``aligned``/``partial``) links, anything else (``not``, None) does not.
    1:1 pairs decide their link; n:m pairs count for each of their links not decided by a 1:1 pair
    (aligned wins). The one reading of labels as links: the whole-article view, completion,
    training data and the export all use it (``linking`` lets the export keep imported links of
    unknown kind).

    Example:
        >>> links_from([([0], [0, 1], "partial"), ([0], [1], "not"), ([0, 1], [0], "aligned")])
        [Link(complex=0, simple=0, label='aligned'), Link(complex=1, simple=0, label='aligned')]
    """
    linking = tuple(linking)
    own: dict[tuple[int, int], str | None] = {}
    spread: dict[tuple[int, int], str] = {}
    for complex_indices, simple_indices, klass in rows:
        complex_indices, simple_indices = list(complex_indices), list(simple_indices)
        if len(complex_indices) == 1 and len(simple_indices) == 1:
            own[(complex_indices[0], simple_indices[0])] = klass
        elif klass in linking:
            for link in expand(complex_indices, simple_indices, klass):
                if spread.get(link.key) != "aligned":
                    spread[link.key] = klass
    decided = {**spread, **own}
    return sorted(Link(c, s, klass) for (c, s), klass in decided.items() if klass in linking)


def group_of(links: Iterable[Link]) -> dict[tuple[int, int], Group]:
    """``{link key: the derived group it is in}`` (:func:`groups`), for labelling rows by group."""
    return {link.key: group for group in groups(links) for link in group.links}


def diff(before: Iterable[Link], after: Iterable[Link]) -> dict[str, list[dict]]:
    """What changed from ``before`` to ``after``: links ``added``, ``removed`` and ``relabelled``
    (``{"complex": [c], "simple": [s], "from": .., "to": ..}``), each sorted."""
    old = {link.key: link for link in before}
    new = {link.key: link for link in after}
    return {
        "added": [new[k].as_dict() for k in sorted(new.keys() - old.keys())],
        "removed": [old[k].as_dict() for k in sorted(old.keys() - new.keys())],
        "relabelled": [{"complex": [k[0]], "simple": [k[1]], "from": old[k].label, "to": new[k].label}
                       for k in sorted(old.keys() & new.keys()) if old[k].label != new[k].label],
    }


def version(user, complex_doc, simple_doc) -> str:
    """The version of ``user``'s labels on the document pair: changes whenever one of them is
    added, changed or deleted (a hash of ids, values and update times). A save must be based on it."""
    from annotation.models import Label

    rows = (Label.objects.filter(annotator=user, pair__complex_document=complex_doc, pair__simple_document=simple_doc)
            .order_by("pk").values_list("pk", "value", "updated_at"))
    text = ";".join(f"{pk}:{value}:{at.isoformat()}" for pk, value, at in rows)
    return hashlib.sha1(text.encode()).hexdigest()[:16]


# --- Parsing what a client sends ---------------------------------------------------------------

def _indices(raw, name: str, where: str, count: int, problems: list[str]) -> tuple[int, ...]:
    raw = [raw] if isinstance(raw, int) and not isinstance(raw, bool) else raw
    if not isinstance(raw, list) or not raw:
        problems.append(f"{where}: '{name}' must be a sentence index or a non-empty list of them")
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


def parse_links(raw, n_complex: int, n_simple: int, *, has_partial: bool = True, name: str = "links",
                labelled: bool = True) -> list[Link]:
    """Validate ``[{"complex": c | [..], "simple": s | [..], "label": "aligned"|"partial"}, ...]``.

    An item with several sentences on a side stands for each of its complex × simple links, all
    with its label (a shorthand: each is stored on its own). The same link given twice with
    different labels is an error. ``labelled=False`` (removed links) ignores labels.

    Raises:
        AlignmentInputError: listing every problem (bad shape, index out of range, unknown label).
    """
    if raw is None and not labelled:
        return []
    if not isinstance(raw, list):
        raise AlignmentInputError(f"'{name}' must be a list of {{complex, simple{', label' if labelled else ''}}} objects")
    problems: list[str] = []
    found: dict[tuple[int, int], Link] = {}
    for n, item in enumerate(raw, start=1):
        where = f"link {n}" if name == "links" else f"{name} link {n}"
        if not isinstance(item, dict):
            problems.append(f"{where}: must be an object with 'complex', 'simple'{' and label' if labelled else ''}")
            continue
        c = _indices(item.get("complex"), "complex", where, n_complex, problems)
        s = _indices(item.get("simple"), "simple", where, n_simple, problems)
        label = item.get("label", "aligned") if labelled else "aligned"
        if label not in LINK_LABELS:
            problems.append(f"{where}: label {label!r} is not one of: {', '.join(LINK_LABELS)}")
            continue
        if label == "partial" and not has_partial:
            problems.append(f"{where}: this project's label scheme has no 'partial' value")
            continue
        for link in expand(c, s, label):
            first = found.setdefault(link.key, link)
            if first.label != link.label:
                problems.append(f"{where}: link C{link.complex} → S{link.simple} is given twice, "
                                f"as {first.label} and as {link.label}")
    if problems:
        raise AlignmentInputError(problems)
    return sorted(found.values())
