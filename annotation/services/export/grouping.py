"""The derived groups of exported pairs (issue 18: "n:m groups are derived from the links").

Every complex–simple link is labelled on its own; groups (1:1, split, fusion, n:m) are never stored.
The export derives them per document pair from the exported links, read as the whole-article view,
completion and training read labels (:func:`annotation.services.editing.links.links_from`: a 1:1
pair decides its link, an n:m pair counts for each of its links not so decided). Each record whose
link(s) survive that reading gets ``group``::

    {"id": "g<complex doc>-<simple doc>-<n>", "kind": "1:1"|"split"|"fusion"|"n:m",
     "complex": [..], "simple": [..], "label": "aligned"|"partial"|"mixed"}

``n`` numbers the document pair's groups in sentence order. Records that link nothing (``not``)
have no group. The released Wiki-Manual TSV keeps its six columns; its sentence ids show the groups.
"""
from __future__ import annotations

from collections import defaultdict

from annotation.label_schemes import POSITIVE_CLASSES as LINKING  # incl. imported links of unknown kind
from annotation.services.editing.links import groups, links_from
from annotation.services.export.records import PairRecord


def assign_groups(records: list[PairRecord]) -> None:
    """Set each record's ``group`` (in place) from the links of its document pair. The groups are found once
    per document pair and each described once (issue 37: ``group_of`` found them a second time, and every
    record hashed its whole group — its links — to number it, ~2 s per 100,000 pairs)."""
    by_docs: dict[tuple[int, int], list[PairRecord]] = defaultdict(list)
    for r in records:
        by_docs[(r.complex_document, r.simple_document)].append(r)
    for (c_doc, s_doc), rows in by_docs.items():
        links = links_from(((r.complex_ids, r.simple_ids, r.counts_as) for r in rows), linking=LINKING)
        described: dict[tuple[int, int], tuple] = {}  # link key → its group's (id, kind, complex, simple, label)
        for n, group in enumerate(groups(links), start=1):  # in sentence order: the group's number
            about = (f"g{c_doc}-{s_doc}-{n}", group.kind, group.complex, group.simple, group.label)
            for link in group.links:
                described[link.key] = about
        for r in rows:
            r.group = None
            if r.counts_as not in LINKING:
                continue
            about = next((described[key] for key in _keys(r.complex_ids, r.simple_ids) if key in described), None)
            if about is not None:
                r.group = {"id": about[0], "kind": about[1], "complex": list(about[2]), "simple": list(about[3]),
                           "label": about[4]}


def _keys(complex_ids, simple_ids) -> list[tuple[int, int]]:
    """The link keys of a pair, in :func:`expand`'s order."""
    simple = sorted(set(simple_ids))
    return [(c, s) for c in sorted(set(complex_ids)) for s in simple]


__all__ = ["LINKING", "assign_groups"]
