"""``jsonl`` — ``jsonl/<split>.jsonl``: one pair per line with everything: ids, levels, texts, label,
  class, provenance, reviewer, every counted vote, score, predicted label, all stored attributes,
  origin, run, derived flag and sources, and ``group``: the split/fusion/n:m group the pair's link(s)
  are in, derived from the links (``{"id", "kind", "complex", "simple", "label"}``; null: no link),
  ``complete`` (its document pair is exhaustively annotated) and each side's sentences one by one
  (``complex_sentences``, ``simple_sentences``) with their paragraphs (``complex_paragraphs``, ...):
  the ``jsonl`` import reads such a file back (``export/completeness.py``).
"""
from __future__ import annotations

import json
from pathlib import Path

from annotation.services.export.completeness import among, complete_documents, pair_fields
from annotation.services.export.formats import register
from annotation.services.export.formats.base import Writer, pair_dict
from annotation.services.export.records import ArticleBatch, PairRecord

REIMPORT_MEANING = (
    'a document pair marked complete is exhaustive gold only when its lines name every sentence of both '
    "documents (each line carries only its pair's sentences; a complete pair without a link has no line); "
    'otherwise sparse gold over the named sentences'
)
"""What this format's gold means once imported back (the manifest's ``reimport``, README.txt)."""


@register("jsonl", reimport="jsonl", reimport_meaning=REIMPORT_MEANING, order=30, readme=(
    'jsonl/*.jsonl        one pair per line: texts, label, class, provenance, votes, score, attributes,\n'
    '                     group (the split/fusion/n:m group derived from the links)'
))
class JsonlWriter(Writer):
    folder = "jsonl"

    def __init__(self, root: Path, splits: list[str], complete: set[tuple[int, int]] | None = None) -> None:
        super().__init__(root, splits)
        self.complete = complete or set()  # (complex document, simple document) exhaustively annotated
        self.complete_written = self.complete_whole = 0

    @classmethod
    def for_export(cls, root: Path, splits: list[str], project, options) -> Writer:
        return cls(root, splits, complete_documents(project, options))

    def names(self, split: str) -> list[str]:
        return [f"{split}.jsonl"]

    def complete_back(self) -> tuple[int, int]:
        """A complete document pair comes back complete only when its lines name every sentence of both
        documents (a pair per line carries only its own sentences; one without a pair has no line)."""
        return self.complete_written, self.complete_whole

    def write(self, batch: ArticleBatch, records: list[PairRecord]) -> None:
        self._count_complete(batch, records)
        if not records:
            return
        dumps = json.dumps
        self._file(f"{batch.split}.jsonl").writelines(
            dumps({**pair_dict(r), **pair_fields(batch, r, self.complete)}, ensure_ascii=False) + "\n" for r in records)

    def _count_complete(self, batch: ArticleBatch, records: list[PairRecord]) -> None:
        named: dict[int, set[int]] = {}
        for r in records:
            named.setdefault(r.complex_document, set()).update(r.complex_ids)
            named.setdefault(r.simple_document, set()).update(r.simple_ids)
        lined = {(r.complex_document, r.simple_document) for r in records}
        for c_doc, s_doc in among(self.complete, batch.documents):
            self.complete_written += 1
            self.complete_whole += (c_doc, s_doc) in lined and all(
                len(named.get(doc, ())) == sum(len(p) for p in batch.documents[doc]["paragraphs"])
                for doc in (c_doc, s_doc))
