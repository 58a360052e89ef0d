"""Syntactic complexity measures over a dependency parse (WIVICO Table 5; ACCESS DepTreeDepth).

All functions take a spaCy ``Doc`` (or ``Span``) and return sentence-level averages/maxima over
the sentences it contains. Definitions (Zou et al. 2022 as cited by WIVICO):

* :func:`max_depth` — longest root-to-leaf path in arcs (root = 0), max over sentences.
* :func:`idt` — Incomplete Dependency Theory: at each token boundary, the number of dependency
  arcs still open (one end before, one after); mean over boundaries.
* :func:`dlt` — Dependency Locality Theory: for every head with left dependents, the number of
  discourse referents (nouns, proper nouns, verbs) from its leftmost dependent to the head;
  mean over such heads.
* :func:`idt_dlt` — per token IDT + DLT (DLT 0 for non-heads), mean over tokens.
* :func:`left_embeddedness` — tokens left of the root verb that are not verbs.
* :func:`noun_nesting` — for nouns having a noun ancestor, the number of noun ancestors; mean.
"""
from __future__ import annotations

from typing import Any

__all__ = ["max_depth", "idt", "dlt", "idt_dlt", "left_embeddedness", "noun_nesting", "syntactic_features"]

_REFERENTS = {"NOUN", "PROPN", "VERB"}
_VERBS = {"VERB", "AUX"}
_NOUNS = {"NOUN", "PROPN"}


def _depth(tok: Any) -> int:
    d = 0
    while tok.head.i != tok.i:
        tok = tok.head
        d += 1
    return d


def max_depth(doc: Any) -> int:
    return max((_depth(t) for t in doc), default=0)


def _idt_per_boundary(sent: Any) -> list[int]:
    start = sent.start
    n = len(sent)
    arcs = [(min(t.i, t.head.i) - start, max(t.i, t.head.i) - start) for t in sent if t.head.i != t.i]
    return [sum(1 for a, b in arcs if a <= k < b) for k in range(n)]


def _dlt_per_token(sent: Any) -> list[int]:
    out = []
    for t in sent:
        lefts = [c.i for c in t.lefts]
        if not lefts:
            out.append(0)
            continue
        lo = min(lefts)
        out.append(sum(1 for u in t.doc[lo : t.i + 1] if u.pos_ in _REFERENTS))
    return out


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def idt(doc: Any) -> float:
    return _mean([float(v) for s in doc.sents for v in _idt_per_boundary(s)])


def dlt(doc: Any) -> float:
    vals = []
    for s in doc.sents:
        vals += [float(v) for t, v in zip(s, _dlt_per_token(s)) if any(True for _ in t.lefts)]
    return _mean(vals)


def idt_dlt(doc: Any) -> float:
    vals = []
    for s in doc.sents:
        vals += [float(a + b) for a, b in zip(_idt_per_boundary(s), _dlt_per_token(s))]
    return _mean(vals)


def left_embeddedness(doc: Any) -> float:
    """Mean over sentences of the non-verb tokens left of the root (ignoring punctuation)."""
    vals = []
    for s in doc.sents:
        root = s.root
        vals.append(float(sum(1 for t in s if t.i < root.i and t.pos_ not in _VERBS and t.pos_ != "PUNCT")))
    return _mean(vals)


def noun_nesting(doc: Any) -> float:
    vals = []
    for t in doc:
        if t.pos_ in _NOUNS:
            k = sum(1 for a in t.ancestors if a.pos_ in _NOUNS)
            if k:
                vals.append(float(k))
    return _mean(vals)


def syntactic_features(doc: Any) -> dict[str, float]:
    """All six measures of one parsed text."""
    return {
        "mdt": float(max_depth(doc)),
        "idt": idt(doc),
        "dlt": dlt(doc),
        "idt_dlt": idt_dlt(doc),
        "le": left_embeddedness(doc),
        "nnd": noun_nesting(doc),
    }
