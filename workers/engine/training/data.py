"""Training data of the aligner: article hold-out and the pair model's examples (paper §2.2, §3.1).

Every input article pair is *exhaustively* annotated: its ``gold`` links are all the links, so
any other (complex, simple) sentence pair is ``not aligned``. The pair model is a 3-class
classifier over (complex sentence, simple sentence): ``not_aligned`` / ``partial`` /
``aligned`` — the Newsela-Manual labels. Its negatives are the hard ones the aligner meets: the
candidates of every simple sentence (most similar complex sentences and the neighbours of the
best one) that are not gold links.

Example:
    >>> from workers.engine.types import ArticlePair, Document
    >>> pair = ArticlePair("a", Document((("A cat sat.", "Rain fell.", "Dogs ran."),)),
    ...                    Document((("A cat sat down.",),)), gold=((0, 0),))
    >>> sim = np.array([[0.9], [0.5], [0.1]], dtype=np.float32)
    >>> [(e.complex, e.label) for e in pair_examples([pair], [sim], k=1)]
    [('A cat sat.', 2), ('Rain fell.', 0)]
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..pair_similarity import top_candidates
from ..types import ArticlePair

__all__ = [
    "PAIR_CLASSES",
    "NOT_ALIGNED",
    "PARTIAL",
    "ALIGNED",
    "PairExample",
    "gold_label_map",
    "pair_examples",
    "labelled_pair_examples",
    "split_holdout",
    "data_fingerprint",
]

PAIR_CLASSES: tuple[str, ...] = ("not_aligned", "partial", "aligned")
"""Class names of the pair model, by class id."""
NOT_ALIGNED, PARTIAL, ALIGNED = 0, 1, 2


@dataclass(frozen=True)
class PairExample:
    """One (complex sentence, simple sentence) training pair with its class id."""

    complex: str
    simple: str
    label: int


def gold_label_map(pair: ArticlePair) -> dict[tuple[int, int], int]:
    """Class id of every gold link (``aligned`` unless ``gold_labels`` says ``partial``)."""
    labels = pair.gold_labels or ("aligned",) * len(pair.gold or ())
    return {link: (ALIGNED if lab == "aligned" else PARTIAL)
            for link, lab in zip(pair.gold or (), labels)}


def pair_examples(
    pairs: Sequence[ArticlePair], base_sims: Sequence[np.ndarray], k: int
) -> list[PairExample]:
    """Gold links plus the non-gold candidates (hard negatives) of every article pair.

    Args:
        pairs: exhaustively annotated article pairs.
        base_sims: base similarity ``[n, m]`` per pair (proposes the candidates).
        k: candidates per simple sentence (see :func:`~workers.engine.pair_similarity.top_candidates`).
    """
    out: list[PairExample] = []
    for pair, sim in zip(pairs, base_sims):
        cs, ss = pair.complex.sentences, pair.simple.sentences
        gold = gold_label_map(pair)
        mask = top_candidates(sim, k)
        for c, s in sorted(gold):
            mask[c, s] = True
        for c, s in zip(*np.nonzero(mask)):
            out.append(PairExample(cs[c], ss[s], gold.get((int(c), int(s)), NOT_ALIGNED)))
    return out


_CLASS_NAMES = {"aligned": ALIGNED, "partial": PARTIAL, "not": NOT_ALIGNED,
                "not_aligned": NOT_ALIGNED, "not-aligned": NOT_ALIGNED}


def labelled_pair_examples(items: Sequence[tuple[str, str, str]]) -> list[PairExample]:
    """Pair-model examples from labelled sentence pairs outside exhaustive articles.

    Args:
        items: ``(complex_text, simple_text, label)`` with label ``aligned``, ``partial`` or
            ``not`` (also ``not_aligned``/``not-aligned``) — e.g. crowd-labelled candidates.

    Raises:
        ValueError: an unknown label (the message lists the valid ones) or an empty text.

    Example:
        >>> labelled_pair_examples([("A cat sat.", "A cat sat down.", "aligned")])[0].label
        2
    """
    out = []
    for k, (complex_text, simple_text, label) in enumerate(items):
        if label not in _CLASS_NAMES:
            raise ValueError(f"extra example {k}: unknown label {label!r}; choose one of: "
                             f"{', '.join(_CLASS_NAMES)}")
        if not complex_text or not simple_text:
            raise ValueError(f"extra example {k}: empty text")
        out.append(PairExample(complex_text, simple_text, _CLASS_NAMES[label]))
    return out


def split_holdout(
    pairs: Sequence[ArticlePair], fraction: float, seed: int
) -> tuple[list[ArticlePair], list[ArticlePair]]:
    """``(train, held_out)`` by article: ``round(fraction · N)`` articles, at least 1 when N ≥ 2.

    With a single article (or ``fraction = 0``) nothing is held out and the caller tunes on the
    training articles.

    Example:
        >>> from workers.engine.types import ArticlePair, Document
        >>> ps = [ArticlePair(str(i), Document(()), Document(()), gold=()) for i in range(8)]
        >>> train, held = split_holdout(ps, 0.25, seed=0)
        >>> len(train), len(held), sorted(p.id for p in train + held) == sorted("01234567")
        (6, 2, True)
    """
    n = len(pairs)
    n_held = 0 if fraction <= 0 or n < 2 else min(n - 1, max(1, round(fraction * n)))
    order = np.random.default_rng(seed).permutation(n)
    held = set(order[:n_held].tolist())
    return ([p for i, p in enumerate(pairs) if i not in held],
            [p for i, p in enumerate(pairs) if i in held])


def data_fingerprint(pairs: Sequence[ArticlePair]) -> str:
    """SHA-256 over the sentences, gold links and labels of ``pairs`` (in order)."""
    h = hashlib.sha256()
    for p in pairs:
        record = {"id": p.id, "complex": p.complex.paragraphs, "simple": p.simple.paragraphs,
                  "gold": p.gold, "gold_labels": p.gold_labels}
        h.update(json.dumps(record, ensure_ascii=False, sort_keys=True).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()
