"""One exported pair, as every writer and filter sees it."""
from __future__ import annotations

from dataclasses import dataclass, field

CLASSES = ("aligned", "partial", "not")


@dataclass(slots=True)
class PairRecord:
    """A pair with both sides' text and how its label was obtained.

    ``label`` is the scheme value (gold) or the predicted label (auto); ``counts_as`` is its class
    (aligned / partial / not; gold may also say ``aligned-or-partial``, a link of unknown kind, or
    ``undecided``, a tie inside an exhaustively annotated document pair). ``provenance``:
    ``adjudicated`` (in-house review), ``majority`` (of ``vote_count`` crowd votes), ``single`` (one
    annotator), ``imported`` (gold that came with the corpus), ``tie`` (undecided), ``model`` (auto export:
    the model's prediction) or ``derived`` (composed across levels, see ``derived.py``). ``pair_id``
    is None for derived pairs; ``derived_from`` lists the pairs they were composed of. Each vote is
    ``{"annotator", "value", "seconds", "comment"}`` (annotators pseudonymous unless names were asked
    for); ``note`` is the adjudication note.
    ``group`` is the split/fusion/n:m group the pair's link(s) belong to, derived from the
    exported links of its document pair (``{"id", "kind", "complex", "simple", "label"}``).
    """

    pair_id: int | None
    article_id: int
    article: str
    split: str
    complex_level: str
    simple_level: str
    complex_rank: int
    simple_rank: int
    complex_document: int
    simple_document: int
    complex_ids: tuple[int, ...]
    simple_ids: tuple[int, ...]
    complex_sentences: list[str]
    simple_sentences: list[str]
    label: str
    counts_as: str
    provenance: str
    votes: list[dict] = field(default_factory=list)
    reviewer: str | None = None
    note: str = ""
    score: float | None = None
    predicted_label: str = ""
    features: dict = field(default_factory=dict)
    origin: str = ""
    run: int | None = None
    derived: bool = False
    derived_from: list[int] = field(default_factory=list)
    stored_gold: bool = False  # gold: a stored Adjudication row decided it (else computed from the votes now)
    stored: tuple[str, str] | None = None  # gold: the pair's stored Adjudication (value, provenance), if any
    group: dict | None = None  # the derived n:m group its link(s) are in (``grouping.py``); None: no link
    by_policy: dict | None = None  # preview: {gold policy: its Gold or None} from the gold reading (breakdown.py)

    @property
    def complex(self) -> str:
        return " ".join(self.complex_sentences)

    @property
    def simple(self) -> str:
        return " ".join(self.simple_sentences)

    @property
    def vote_count(self) -> int:
        return len(self.votes)

    @property
    def level_pair(self) -> tuple[str, str]:
        return (self.complex_level, self.simple_level)


@dataclass(slots=True)
class ArticleBatch:
    """The exported pairs of one article (writers that group, like the joined parallel files and
    the article JSONL, work per article), with its documents' sentences by paragraph."""

    article_id: int
    title: str
    split: str
    documents: dict[int, dict]  # document id → {"level", "rank", "paragraphs": [[text, ...], ...]}
    records: list[PairRecord]
    # what the import kept of the article's file, read once per chunk of articles by the export's source
    # (``identity.source_identity``): ``(document id → its kept sentence ids, the article's meta)``; None:
    # not read (a batch built elsewhere), the identity reads it itself
    kept: tuple[dict[int, list], dict] | None = None
    # document id → (its sentences in order, each sentence's paragraph), built once per batch by :meth:`flat`
    # (issue 37: the pair-per-line formats rebuilt both per pair, 1,000,000 times at a million pairs)
    _flat: dict[int, tuple[list[str], list[int]]] = field(default_factory=dict, init=False, repr=False,
                                                           compare=False)

    def flat(self, document: int) -> tuple[list[str], list[int]]:
        """``document``'s sentences in order and each one's paragraph index (empty for a document not in
        the batch)."""
        found = self._flat.get(document)
        if found is None:
            paragraphs = (self.documents.get(document) or {}).get("paragraphs", [])
            found = self._flat[document] = ([t for p in paragraphs for t in p],
                                            [k for k, p in enumerate(paragraphs) for _ in p])
        return found
