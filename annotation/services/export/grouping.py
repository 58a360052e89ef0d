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
from annotation.services.editing.links import expand, group_of, groups, links_from
from annotation.services.export.records import PairRecord


def assign_groups(records: list[PairRecord]) -> None:
    """Set each record's ``group`` (in place) from the links of its document pair."""
    by_docs: dict[tuple[int, int], list[PairRecord]] = defaultdict(list)
    for r in records:
        by_docs[(r.complex_document, r.simple_document)].append(r)
    for (c_doc, s_doc), rows in by_docs.items():
        links = links_from(((r.complex_ids, r.simple_ids, r.counts_as) for r in rows), linking=LINKING)
        number = {g: n for n, g in enumerate(groups(links), start=1)}  # groups are frozen: equal by value
        found = group_of(links)
        for r in rows:
            r.group = None
            if r.counts_as not in LINKING:
                continue
            group = next((found[link.key] for link in expand(r.complex_ids, r.simple_ids, r.counts_as)
                          if link.key in found), None)
            if group is not None:
                r.group = {"id": f"g{c_doc}-{s_doc}-{number[group]}", "kind": group.kind,
                           "complex": list(group.complex), "simple": list(group.simple), "label": group.label}


__all__ = ["LINKING", "assign_groups"]
