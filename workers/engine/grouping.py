"""Turning sentence links into n:m :class:`AlignedPair` groups, and labelling them.

Links ``(ci, si)`` are grouped by connected components of the bipartite link graph. A component
becomes one group when it is *complete* (every complex sentence of it is linked to every simple
sentence of it), so a group never stands for a link that was not predicted; otherwise it is
split into one group per simple sentence (several complex → one simple), and simple sentences
sharing exactly the same complex sentences are joined again (one complex → several simple).

A group is labelled ``aligned`` when the similarity of its two sides (complex sentences joined
vs simple sentences joined, in document order; see ``SimilarityModel.group_similarity``) reaches
``aligned_threshold``, else ``partial``: a split's pieces are each only partly similar to the long sentence, but together
they cover it.

A trained aligner decides instead from its pair model (``aligned_prob``, P(aligned | linked) per
link): a group is ``aligned`` when the mean over its links reaches ``aligned_threshold`` for a
1:1 group, ``group_aligned_threshold`` for an n:m one — the annotation guidelines label the pieces
of a split and the parts of a fusion ``partial`` (paper §3.1), so n:m groups get their own
cut-off, tuned on held-out articles.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np

from .similarity import SimilarityModel
from .types import AlignedPair

__all__ = ["Component", "connected_groups", "group_links", "label_groups"]

Group = tuple[tuple[int, ...], tuple[int, ...]]


class Component(NamedTuple):
    """A connected component of n:m groups: its sentences, and which of the input groups it joins."""

    complex: tuple[int, ...]
    simple: tuple[int, ...]
    members: tuple[int, ...]  # positions of its groups in the input, ascending


def connected_groups(groups: Iterable[tuple[Iterable[int], Iterable[int]]]) -> list[Component]:
    """Merge n:m groups that share a sentence: the connected components of the bipartite graph of
    complex and simple sentences in which every group joins all of its sentences.

    The one implementation of "groups of links" (the engine's :func:`group_links`, the app's
    whole-article links). Components are sorted by their complex, then their simple sentences; a
    group without any sentence belongs to none.

    Example:
        >>> connected_groups([((0,), (0,)), ((), ()), ((2,), (3,)), ((0,), (1,))])
        [Component(complex=(0,), simple=(0, 1), members=(0, 3)), Component(complex=(2,), simple=(3,), members=(2,))]
    """
    # union-find over the sentences (a document pair's few dozen links: a sparse-graph library's setup cost
    # per call was most of the export's grouping time, issue 37); components are sorted, so the result does
    # not depend on which node roots a component
    nodes: dict[tuple[int, int], int] = {}  # (0 complex | 1 simple, sentence index) → node
    parent: list[int] = []
    heads: list[int] = []  # each group's first node (-1: an empty group)

    def root(node: int) -> int:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for complex_indices, simple_indices in groups:
        head = -1
        for key in [(0, i) for i in complex_indices] + [(1, j) for j in simple_indices]:
            node = nodes.get(key)
            if node is None:
                node = nodes[key] = len(parent)
                parent.append(node)
            if head < 0:
                head = node
            else:  # a star from the group's first sentence joins all of them
                a, b = root(head), root(node)
                if a != b:
                    parent[b] = a
        heads.append(head)
    if not nodes:
        return []
    sides: dict[int, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
    for (side, index), node in nodes.items():
        sides[root(node)][side].append(index)
    members: dict[int, list[int]] = defaultdict(list)
    for k, head in enumerate(heads):
        if head >= 0:
            members[root(head)].append(k)
    return sorted(Component(tuple(sorted(c)), tuple(sorted(s)), tuple(members[comp]))
                  for comp, (c, s) in sides.items())


def group_links(links: Iterable[tuple[int, int]]) -> list[Group]:
    """Group links into n:m groups (see module docstring), sorted by first simple sentence.

    Example:
        >>> group_links([(0, 0), (0, 1), (2, 2), (3, 2), (5, 4)])
        [((0,), (0, 1)), ((2, 3), (2,)), ((5,), (4,))]
    """
    links = sorted(set(links))
    groups: list[Group] = []
    for component in connected_groups(((c,), (s,)) for c, s in links):
        comp = [links[k] for k in component.members]
        if len(comp) == len(component.complex) * len(component.simple):
            groups.append((component.complex, component.simple))
            continue
        by_simple: dict[int, list[int]] = defaultdict(list)
        for c, s in comp:
            by_simple[s].append(c)
        by_cset: dict[tuple[int, ...], list[int]] = defaultdict(list)
        for s, cl in by_simple.items():
            by_cset[tuple(sorted(cl))].append(s)
        for cset, sl in by_cset.items():
            groups.append((cset, tuple(sorted(sl))))
    groups.sort(key=lambda g: (g[1][0], g[0][0]))
    return groups


def label_groups(
    groups: Sequence[Group],
    complex_sents: Sequence[str],
    simple_sents: Sequence[str],
    sim: np.ndarray,
    similarity: SimilarityModel,
    aligned_threshold: float,
    extra_features: dict[Group, dict[str, float]] | None = None,
    aligned_prob: np.ndarray | None = None,
    group_aligned_threshold: float | None = None,
) -> list[AlignedPair]:
    """:class:`AlignedPair` per group with label, score and features.

    ``score`` is the similarity of the joined texts (for a 1:1 group the link similarity);
    features: ``sim_max``/``sim_mean`` over the group's links and ``group_sim``, plus
    ``p_aligned`` (mean P(aligned | linked) of its links) when ``aligned_prob`` ``[n, m]`` is
    given — then the label follows it (see module docstring; ``group_aligned_threshold``
    defaults to ``aligned_threshold``).
    """
    if not groups:
        return []
    multi = [k for k, (cs, ss) in enumerate(groups) if len(cs) > 1 or len(ss) > 1]
    joined = np.zeros(len(groups), dtype=np.float32)
    for k, (cs, ss) in enumerate(groups):
        if len(cs) == 1 and len(ss) == 1:
            joined[k] = sim[cs[0], ss[0]]
    if multi:
        a = [[complex_sents[c] for c in groups[k][0]] for k in multi]
        b = [[simple_sents[s] for s in groups[k][1]] for k in multi]
        joined[multi] = similarity.group_similarity(a, b)
    out = []
    for k, (cs, ss) in enumerate(groups):
        block = sim[np.ix_(cs, ss)]
        feats = {"sim_max": float(block.max()), "sim_mean": float(block.mean()),
                 "group_sim": float(joined[k])}
        if extra_features and (cs, ss) in extra_features:
            feats.update(extra_features[(cs, ss)])
        score = float(joined[k])
        label = "aligned" if score >= aligned_threshold else "partial"
        if aligned_prob is not None:
            p_aligned = float(np.nanmean(aligned_prob[np.ix_(cs, ss)]))
            feats["p_aligned"] = p_aligned
            single = len(cs) == 1 and len(ss) == 1
            cut = aligned_threshold if single or group_aligned_threshold is None \
                else group_aligned_threshold
            label = "aligned" if p_aligned >= cut else "partial"
        out.append(AlignedPair(cs, ss, label, score, feats))
    return out
