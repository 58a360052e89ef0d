"""Hand-made exported pairs for the writers' own tests: one article with a complex and a simple document
(ids 1 and 2, which no database row has), and records over their sentences."""
from __future__ import annotations

from annotation.services.export.records import ArticleBatch, PairRecord

COMPLEX = ["Owls, which hunt at night, have exceptional hearing.", "They live everywhere."]
SIMPLE = ["Owls hunt at night.", "They hear very well.", "They live everywhere."]


def record(complex_ids, simple_ids, counts_as: str = "aligned", *, label: str | None = None, split: str = "train",
           **fields) -> PairRecord:
    """A gold pair of the article's documents 1 → 2 over ``complex_ids`` × ``simple_ids``."""
    return PairRecord(
        pair_id=fields.pop("pair_id", 100 + 10 * complex_ids[0] + simple_ids[0]), article_id=1, article="Owls",
        split=split, complex_level="0", simple_level="1", complex_rank=0, simple_rank=1, complex_document=1,
        simple_document=2, complex_ids=tuple(complex_ids), simple_ids=tuple(simple_ids),
        complex_sentences=[COMPLEX[i] for i in complex_ids], simple_sentences=[SIMPLE[i] for i in simple_ids],
        label=label or counts_as, counts_as=counts_as, **{"provenance": "adjudicated", **fields})


def batch(records: list[PairRecord], split: str = "train") -> ArticleBatch:
    """The article's batch holding ``records``."""
    return ArticleBatch(1, "Owls", split, {1: {"level": "0", "rank": 0, "paragraphs": [COMPLEX]},
                                           2: {"level": "1", "rank": 1, "paragraphs": [SIMPLE[:2], SIMPLE[2:]]}},
                        records)
