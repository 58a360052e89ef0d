"""``articles`` — ``articles/<split>.jsonl``: the engine/importer format (SPEC §4), one line per
  article document pair: both documents' paragraphs, ``gold`` 1:1 links with ``gold_labels``
  (aligned/partial, for readers of the SPEC §4 format), ``groups`` derived from the links (1:1,
  split, fusion, n:m; never stored; the jsonl format's ``group``), and ``pairs`` with the full
  n:m pairs: label, class, provenance, votes, score, attributes, derived flag, group id, and
  ``complete`` (the document pair is exhaustively annotated: an unlinked sentence pair is not
  aligned). What an imported file said of its own rows is carried (``export/identity.py``): each side's
  ``sentence_ids`` (as the source numbered them), ``gleu`` (``"ci,si"`` → the source's GLEU cell) and
  ``row_order`` (``"simple"``, ``"complex"`` or the ``[ci, si]`` cells in file order). Re-importing it
  with the JSONL importer reproduces every pair (n:m, any label) with its score and attributes, the
  split, the completeness and those ids, GLEU cells and row order (see ``__init__``'s round-trip note).
"""
from __future__ import annotations

import json

from annotation.services.editing.links import links_from
from annotation.services.export.completeness import by_document_pair, complete_documents
from annotation.services.export.formats import register
from annotation.services.export.formats.base import LINKING, Writer
from annotation.services.export.identity import source_identity
from annotation.services.export.records import ArticleBatch, PairRecord

REIMPORT_MEANING = (
    'each line says it: complete true = exhaustive gold over the whole documents, false = sparse'
)
"""What this format's gold means once imported back (the manifest's ``reimport``, README.txt)."""


@register("articles", reimport="jsonl", reimport_meaning=REIMPORT_MEANING, order=40, readme=(
    'articles/*.jsonl     engine/importer format (one article document pair per line, gold links)'
))
class ArticlesWriter(Writer):
    """Engine/importer JSONL, one line per (article, complex document, simple document)."""

    folder = "articles"

    def __init__(self, root, splits: list[str], complete: set[tuple[int, int]] | None = None) -> None:
        super().__init__(root, splits)
        self.complete = complete or set()  # (complex document, simple document) exhaustively annotated
        self.complete_written = 0

    @classmethod
    def for_export(cls, root, splits: list[str], project, options) -> Writer:
        return cls(root, splits, complete_documents(project, options))

    def names(self, split: str) -> list[str]:
        return [f"{split}.jsonl"]

    def complete_back(self) -> tuple[int, int]:
        """Every complete document pair is a line with whole documents: all come back complete."""
        return self.complete_written, self.complete_written

    def write(self, batch: ArticleBatch, records: list[PairRecord]) -> None:
        by_docs = by_document_pair(batch, records, self.complete)
        if not by_docs:
            return
        out = self._file(f"{batch.split}.jsonl")
        single = len(by_docs) == 1
        self.complete_written += sum(key in self.complete for key in by_docs)
        identity = source_identity(batch)
        for (c_doc, s_doc), rows in sorted(by_docs.items(), key=lambda kv: (batch.documents[kv[0][0]]["rank"],
                                                                             batch.documents[kv[0][1]]["rank"])):
            complex_doc, simple_doc = batch.documents[c_doc], batch.documents[s_doc]
            # per link, read as everywhere (a 1:1 pair decides its link; aligned wins among n:m pairs)
            links = {link.key: link.label for link in links_from(
                ((r.complex_ids, r.simple_ids, r.counts_as) for r in rows), linking=LINKING)}
            ordered = sorted(links)
            line = {
                "id": batch.title if single else f"{batch.title} [{complex_doc['level']}→{simple_doc['level']}]",
                "article": batch.title,
                "split": batch.split,
                "complete": (c_doc, s_doc) in self.complete,
                "complex": _side(complex_doc, identity.sentence_ids(c_doc, complex_doc["level"])),
                "simple": _side(simple_doc, identity.sentence_ids(s_doc, simple_doc["level"])),
                "gold": [list(link) for link in ordered],
                "gold_labels": [links[link] for link in ordered],
                "groups": list({r.group["id"]: r.group for r in rows if r.group}.values()),
                "pairs": [{"complex": list(r.complex_ids), "simple": list(r.simple_ids), "label": r.label,
                           "class": r.counts_as, "provenance": r.provenance, "votes": r.votes, "score": r.score,
                           "attributes": r.features, "derived": r.derived, "group": r.group and r.group["id"]}
                          for r in rows],
            }
            gleu, order = identity.of_pair(complex_doc["level"], simple_doc["level"])
            if gleu:
                line["gleu"] = gleu
            if order is not None:
                line["row_order"] = order
            out.write(json.dumps(line, ensure_ascii=False) + "\n")


def _side(document: dict, sentence_ids: list[str] | None) -> dict:
    """A line's ``complex`` / ``simple``: level, paragraphs and, when the import kept them, the source's sentence ids."""
    side = {"level": document["level"], "paragraphs": document["paragraphs"]}
    if sentence_ids is not None:
        side["sentence_ids"] = sentence_ids
    return side
