"""Plain data types of the engine: documents in, alignments out (SPEC §4).

Indices are always into the *flattened* sentence list of a document.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

PairLabel = Literal["aligned", "partial"]
PAIR_LABELS: tuple[str, ...] = ("aligned", "partial")


@dataclass(frozen=True)
class Document:
    """One version of a text: paragraphs of pre-split sentences.

    Example:
        >>> doc = Document(paragraphs=(("S0.", "S1."), ("S2.",)))
        >>> doc.sentences
        ('S0.', 'S1.', 'S2.')
        >>> doc.paragraph_index
        (0, 0, 1)
    """

    paragraphs: tuple[tuple[str, ...], ...]
    level: str | None = None

    @property
    def sentences(self) -> tuple[str, ...]:
        return tuple(s for p in self.paragraphs for s in p)

    @property
    def paragraph_index(self) -> tuple[int, ...]:
        """Paragraph number of every flattened sentence."""
        return tuple(i for i, p in enumerate(self.paragraphs) for _ in p)

    def __len__(self) -> int:
        return sum(len(p) for p in self.paragraphs)


@dataclass(frozen=True)
class ArticlePair:
    """A complex and a simple version of one article, with optional gold ``(ci, si)`` links."""

    id: str
    complex: Document
    simple: Document
    gold: tuple[tuple[int, int], ...] | None = None
    identical: tuple[tuple[int, int], ...] = ()
    gold_labels: tuple[str, ...] | None = None
    """Optional label of every ``gold`` link ("aligned"/"partial"); ``None`` means all aligned."""


@dataclass(frozen=True)
class AlignedPair:
    """An n:m link: complex sentence indices ↔ simple sentence indices."""

    complex: tuple[int, ...]
    simple: tuple[int, ...]
    label: PairLabel
    score: float
    features: dict[str, float] = field(default_factory=dict)

    def links(self) -> list[tuple[int, int]]:
        """The 1:1 links this group stands for (used by Task 1/2 evaluation)."""
        return [(c, s) for c in self.complex for s in self.simple]


@dataclass
class Alignment:
    """The engine's answer for one article pair."""

    id: str
    pairs: list[AlignedPair]
    meta: dict[str, object] = field(default_factory=dict)
