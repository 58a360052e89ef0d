"""``jsonl`` — ``jsonl/<split>.jsonl``: one pair per line with everything: ids, levels, texts, label,
  class, provenance, reviewer, every counted vote, score, predicted label, all stored attributes,
  origin, run, derived flag and sources, and ``group``: the split/fusion/n:m group the pair's link(s)
  are in, derived from the links (``{"id", "kind", "complex", "simple", "label"}``; null: no link).
"""
from __future__ import annotations

import json

from annotation.services.export.formats import register
from annotation.services.export.formats.base import Writer, pair_dict
from annotation.services.export.records import ArticleBatch, PairRecord


@register("jsonl", order=30, readme=(
    'jsonl/*.jsonl        one pair per line: texts, label, class, provenance, votes, score, attributes,\n'
    '                     group (the split/fusion/n:m group derived from the links)'
))
class JsonlWriter(Writer):
    folder = "jsonl"

    def names(self, split: str) -> list[str]:
        return [f"{split}.jsonl"]

    def write(self, batch: ArticleBatch, records: list[PairRecord]) -> None:
        dumps = json.dumps
        self._file(f"{batch.split}.jsonl").writelines(dumps(pair_dict(r), ensure_ascii=False) + "\n" for r in records)
