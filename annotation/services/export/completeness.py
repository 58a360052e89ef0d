"""What the gold formats write beside each pair so that an import gets the same article back
(issue 27 §4): whether its document pair is *complete* (exhaustively annotated: every unlinked
sentence pair is not aligned, ``review.exhaustive``) and, for the pair-per-line formats (``jsonl``,
``hf``), each side's sentences one by one with their paragraph positions.

Example:
    >>> sentence_fields({"paragraphs": [["A.", "B."], ["C."]]}, {"paragraphs": [["a."]]}, (1, 2), (0,), "complex")
    {'complex_sentences': ['B.', 'C.'], 'complex_paragraphs': [0, 1]}
"""
from __future__ import annotations

GOLD_MEANING = "sparse"
"""The gold meaning to import any of them with: each file says per document pair whether it is
complete (``tsv``: every m × n sentence pair listed; the others: ``complete``), which wins over the
import's meaning; the rest is sparse."""


def reimport_guide(formats, complete_back: dict[str, tuple] | None = None) -> dict[str, dict]:
    """The manifest's ``reimport``: per gold format written that declares how it is read back (its
    registration's ``reimport`` and ``reimport_meaning``), the folder to import, with which import
    format (``--format auto`` finds the same) and gold meaning (``sparse``: what the files do not state
    themselves), what that gold then means (``meaning``) and how many complete document pairs were
    written and come back complete (``complete_pairs``; ``tsv`` adds its ``sidecar`` and what the TSV
    alone reads back, ``tsv_alone``)."""
    from annotation.services.export.formats import get

    out = {}
    for name in formats:
        spec = get(name)
        if spec.reimport is None:  # its gold is not read back (a training output)
            continue
        out[name] = {"folder": spec.writer.folder, "format": spec.reimport, "gold_meaning": GOLD_MEANING,
                     "meaning": spec.reimport_meaning}
        if complete_back and name in complete_back:
            written, back, *more = complete_back[name]
            out[name]["complete_pairs"] = {"written": written, "read_back_complete": back}
            if more:  # tsv: its sidecar, and what the TSV alone reads back
                out[name]["complete_pairs"].update(more[0])
    return out


def reimport_readme(guide: dict[str, dict]) -> str:
    """README.txt's section on importing the gold formats back (the manifest's ``reimport``)."""
    lines = ["", "Importing this export back (manifest.json \"reimport\"): import the folder with --format auto",
             "(or the format named) and gold meaning \"sparse\"; each file states which document pairs are",
             "complete (exhaustive gold), and that wins over the meaning chosen:"]
    for name, g in guide.items():
        counts = g.get("complete_pairs")
        back = (f" Complete document pairs: {counts['written']} written, {counts['read_back_complete']} read back "
                "complete" if counts else "")
        if counts and "tsv_alone" in counts:
            alone = counts["tsv_alone"]
            back += (f" (with {counts['sidecar']}; " if counts.get("sidecar") else " (no sidecar needed; ")
            back += f"the TSV alone: {alone['read_back_complete']} read back complete"
            if alone["sparse_read_back_complete"]:
                back += (f", {alone['sparse_read_back_complete']} of them sparse document pairs whose rows cross "
                         "every sentence they name")
            back += ")"
        back += "." if counts else ""
        lines.append(f"  {name} ({g['folder']}/, import format {g['format']}): {g['meaning']}.{back}")
    return "\n".join(lines) + "\n"


class DocumentPairs(set):
    """``{(complex document, simple document)}`` indexed by complex document, so that :func:`among` finds an
    article's pairs from its few documents (issue 37: each format scanned the project's 2,000 complete
    document pairs for each of 20,000 articles). Built once; not to be changed afterwards."""

    def __init__(self, pairs=()) -> None:
        super().__init__(pairs)
        self.of: dict[int, list[int]] = {}
        for c_doc, s_doc in sorted(self):
            self.of.setdefault(c_doc, []).append(s_doc)


def among(pairs: set[tuple[int, int]], documents) -> list[tuple[int, int]]:
    """The document pairs of ``pairs`` whose two documents are both in ``documents``."""
    if isinstance(pairs, DocumentPairs):
        return [(c, s) for c in documents for s in pairs.of.get(c, ()) if s in documents]
    return [(c, s) for c, s in pairs if c in documents and s in documents]


def complete_documents(project, options) -> set[tuple[int, int]]:
    """``{(complex document, simple document)}`` exhaustive under the export's gold policy (gold
    exports; none for auto): :func:`annotation.services.review.gold_reading.exhaustive_documents` —
    an article completed by one annotator is not complete under ``majority``."""
    if getattr(options, "kind", "gold") != "gold":
        return DocumentPairs()
    from annotation.services.review.gold_reading import exhaustive_documents

    return DocumentPairs(exhaustive_documents(project, getattr(options, "label_policy", "majority-or-single")))


def by_document_pair(batch, records, complete: set[tuple[int, int]]) -> dict[tuple[int, int], list]:
    """An article batch's records grouped by (complex document, simple document), with an empty group
    for each complete document pair of the batch that has no record (every sentence pair not aligned)."""
    groups: dict[tuple[int, int], list] = {}
    for r in records:
        groups.setdefault((r.complex_document, r.simple_document), []).append(r)
    for c_doc, s_doc in among(complete, batch.documents):
        groups.setdefault((c_doc, s_doc), [])
    return groups


def paragraph_positions(document: dict | None) -> list[int]:
    """Sentence index → paragraph index of one document (``ArticleBatch.documents`` entry)."""
    return [p for p, sentences in enumerate((document or {}).get("paragraphs", [])) for _ in sentences]


def sentence_fields(complex_doc: dict | None, simple_doc: dict | None, complex_ids, simple_ids,
                    *sides: str) -> dict:
    """``<side>_sentences`` (each sentence's text) and ``<side>_paragraphs`` (its paragraph) of a pair."""
    out = {}
    for side, doc, ids in (("complex", complex_doc, complex_ids), ("simple", simple_doc, simple_ids)):
        if side not in sides:
            continue
        sentences = [t for p in (doc or {}).get("paragraphs", []) for t in p]
        positions = paragraph_positions(doc)
        out[f"{side}_sentences"] = [sentences[i] for i in ids if i < len(sentences)]
        out[f"{side}_paragraphs"] = [positions[i] if i < len(positions) else 0 for i in ids]
    return out


def pair_fields(batch, record, complete: set[tuple[int, int]]) -> dict:
    """What a pair-per-line format adds to :func:`~annotation.services.export.formats.base.pair_dict`:
    ``complete``, both sides' sentences and paragraph positions, and each document's size
    (``<side>_sentence_count``): a re-import holds only the sentences the pairs name, so it keeps a
    document pair complete only when those are every sentence of both documents. Equal to
    :func:`sentence_fields` of the two documents; each document flattened once per batch (``ArticleBatch.flat``)."""
    c_sentences, c_positions = batch.flat(record.complex_document)
    s_sentences, s_positions = batch.flat(record.simple_document)
    c_n, s_n = len(c_sentences), len(s_sentences)
    c_ids, s_ids = record.complex_ids, record.simple_ids
    return {"complete": (record.complex_document, record.simple_document) in complete,
            "complex_sentence_count": c_n or None, "simple_sentence_count": s_n or None,
            "complex_sentences": [c_sentences[i] for i in c_ids if i < c_n],
            "complex_paragraphs": [c_positions[i] if i < c_n else 0 for i in c_ids],
            "simple_sentences": [s_sentences[i] for i in s_ids if i < s_n],
            "simple_paragraphs": [s_positions[i] if i < s_n else 0 for i in s_ids]}
