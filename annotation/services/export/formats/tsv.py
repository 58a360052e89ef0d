"""``tsv`` — ``wiki-manual/<split>.tsv``: the released Wiki-Manual/Newsela-Manual layout, no header,
  tab-separated ``label, simple-sent-id, complex-sent-id, simple, complex, GLEU``. Labels are
  written as those files name them (``aligned``, ``partialAligned``, ``notAligned``, from the
  label's class). The layout can say nothing else, so a pair whose value says less — a link of
  unknown kind (``aligned-or-partial``, imported sparse gold) or a tie (``undecided``) — has no row
  at all (never ``aligned`` nor ``notAligned``): it is counted, by reason, in :meth:`left_out` (the
  manifest's ``left_out`` and README.txt), and the jsonl / articles / hf files carry it; an n:m pair
  becomes one row per sentence link (c × s), each with the pair's label, as the released data lists
  multi-sentence alignments. Sentence ids are ``<article>-<level>-<paragraph>-<sentence index in the
  document>``. GLEU: ``metrics.gleu``. A document imported from such a file keeps the file's ids, and
  each row the file's GLEU cell (``wiki-manual`` import: ``Document.meta["wiki_manual_ids"]``,
  ``Article.meta["wiki_manual_gleu"]``), so an imported file exported again gives the same rows. Only
  splits with rows get a file (an empty ``test.tsv`` is no Wiki-Manual file).

  A gold export writes every m × n sentence pair of an exhaustively annotated document pair
  (``review.exhaustive``), as the released files do: the sentence pairs nobody linked as
  ``notAligned`` rows, in complex-then-simple sentence order (a pair the export's filters leave out
  has no row: such a document pair reads back as partial). The import format ``wiki-manual``
  reads such a file back as the same documents and the same (exhaustive) gold.

  What the six columns cannot say goes into a sidecar beside the TSV, ``wiki-manual/gold_sidecar.json``
  (:data:`SIDECAR`), written only when the TSV alone would read back differently: the rows left out (their
  cells, with the value as the label: ``aligned-or-partial``, ``undecided``) and the document pairs that are
  complete under the export's gold policy (article, levels, each document's sentence count). The
  ``wiki-manual`` import of the folder (or its zip) reads it: a listed pair whose sentences and cells the
  files carry whole comes back complete, its left-out cells with their exact values; an unlisted pair is
  sparse even when listed m × n. The TSV imported alone reads as before.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from annotation.label_schemes import UNKNOWN_KIND
from annotation.services.corpus.importing.formats.wiki_manual import SIDECAR
from annotation.services.export.formats import register
from annotation.services.export.formats.base import Writer, clean_line
from annotation.services.export.identity import source_identity
from annotation.services.export.metrics import gleu_of, profile
from annotation.services.export.records import ArticleBatch, PairRecord
from annotation.services.review.gold_rule import UNDECIDED

WIKI_LABELS = {"aligned": "aligned", "partial": "partialAligned", "not": "notAligned"}
LEFT_OUT = {UNKNOWN_KIND: "aligned-or-partial: a link of unknown kind (imported without a label)",
            UNDECIDED: "undecided: the annotators' votes tie (waiting in adjudication)"}
"""Classes the layout cannot carry, with why (README.txt)."""
SIDECAR_ABOUT = ("alignapp's gold beyond the six TSV columns: 'complete' lists the document pairs exhaustively "
                 "annotated under the export's gold policy (every sentence pair not listed as a row here or in the "
                 "TSV is not aligned); 'rows' are the sentence pairs whose value the TSV cannot say (aligned-or-"
                 "partial: a link of unknown kind; undecided: a tie), with the TSV's columns. Import the folder "
                 "with format wiki-manual to get both back; the TSV alone reads them as sparse.")


REIMPORT_MEANING = (
    'the folder (the TSV files and wiki-manual/gold_sidecar.json, written when the TSV alone would read '
    'back differently): a document pair the sidecar lists complete is exhaustive gold when the files '
    "carry its documents whole and each of its m x n sentence pairs as a row (the sidecar's rows: the "
    'links of unknown kind and the ties the six columns cannot say, which come back with those values, '
    'never as notAligned); every other document pair is sparse gold over the sentences it names, its '
    'notAligned rows stored. Without the sidecar (the TSV alone) a document pair listed m x n is '
    'exhaustive gold, one with a missing row or listed in part sparse'
)
"""What this format's gold means once imported back (the manifest's ``reimport``, README.txt)."""


@register("tsv", reimport="wiki-manual", reimport_meaning=REIMPORT_MEANING, order=10, readme=(
    'wiki-manual/*.tsv    label, simple-sent-id, complex-sent-id, simple, complex, GLEU (no header;\n'
    '                     labels aligned / partialAligned / notAligned; n:m pairs as 1:1 rows;\n'
    '                     exhaustively annotated document pairs: every m x n sentence pair; pairs\n'
    '                     whose value is aligned-or-partial or undecided have no row: see left_out;\n'
    '                     wiki-manual/gold_sidecar.json, when needed: those rows with their values and\n'
    '                     the complete document pairs, so the folder re-imports them exactly)'
))
class TsvWriter(Writer):
    folder = "wiki-manual"

    def __init__(self, root: Path, splits: list[str], exhaustive: set[tuple[int, int]] | None = None,
                 policy: str | None = None) -> None:
        super().__init__(root, splits)
        self.exhaustive = exhaustive or set()  # (complex document, simple document) written m × n
        self.exhaustive_of: dict[int, list[int]] = {}  # complex document → its simple documents in ``exhaustive``
        for c_doc, s_doc in sorted(self.exhaustive):
            self.exhaustive_of.setdefault(c_doc, []).append(s_doc)
        self.policy = policy  # the gold policy (gold exports): a sidecar is written when needed
        self.skipped: Counter = Counter()  # pairs left out, by the class the layout cannot carry
        self.complete_written = self.complete_whole = self.complete_alone = self.sparse_as_complete = 0
        self.listed: list[dict] = []  # the sidecar's complete document pairs
        self.extra = 0  # sidecar rows written (to a spool file: bounded memory)
        self._spool = None

    @classmethod
    def for_export(cls, root: Path, splits: list[str], project, options) -> Writer:
        if getattr(options, "kind", "gold") != "gold":
            return cls(root, splits)
        from annotation.services.export.completeness import complete_documents

        return cls(root, splits, complete_documents(project, options), getattr(options, "label_policy", None))

    def names(self, split: str) -> list[str]:
        return [f"{split}.tsv"]

    def complete_back(self) -> tuple[int, int, dict]:
        """``(complete document pairs written, read back complete from the folder, the TSV alone's counts)``.
        The folder (TSV + :data:`SIDECAR`) gives back every complete pair whose every cell is a row there or
        in the sidecar (one with a pair the filters dropped has a hole and reads back sparse), and no other.
        The TSV alone: a pair with a left-out cell (a link of unknown kind, a tie) reads back sparse, and
        sparse document pairs whose rows cross every sentence they name read back complete (the six columns
        cannot tell them from complete ones): that is why the sidecar is written when either happens."""
        sidecar = bool(self.extra or self.sparse_as_complete)
        alone = {"read_back_complete": self.complete_alone + self.sparse_as_complete,
                 "sparse_read_back_complete": self.sparse_as_complete}
        back = self.complete_whole if sidecar else alone["read_back_complete"]
        return self.complete_written, back, {"sidecar": f"{self.folder}/{SIDECAR}" if sidecar else None,
                                             "tsv_alone": alone}

    def left_out(self) -> dict[str, int]:
        """Pairs without a row, by their class (``aligned-or-partial``, ``undecided``)."""
        return {klass: self.skipped[klass] for klass in LEFT_OUT if self.skipped[klass]}

    def _label(self, r: PairRecord) -> str:
        """The row label of ``r``; for a class the layout cannot carry (no TSV row, counted in :meth:`left_out`)
        the class itself, which the sidecar writes as the label."""
        if r.counts_as in LEFT_OUT:
            self.skipped[r.counts_as] += 1
            return r.counts_as
        return WIKI_LABELS.get(r.counts_as, "notAligned")

    def _sidecar_row(self, split: str, cells: list[str]) -> None:
        if self._spool is None:
            self.root.mkdir(parents=True, exist_ok=True)
            self._spool = open(self.root / f".{SIDECAR}.rows", "w+", encoding="utf-8")  # noqa: SIM115 - close()
        keys = ("label", "simple_id", "complex_id", "simple", "complex", "gleu")
        self._spool.write(json.dumps({"split": split, **dict(zip(keys, cells))}, ensure_ascii=False) + "\n")
        self.extra += 1

    def close(self) -> list[Path]:
        """The TSV files, and the sidecar when the TSV alone would read back differently (:meth:`complete_back`)."""
        paths = super().close()
        spool, self._spool = self._spool, None
        if spool is not None:
            spool.seek(0)
        try:
            if self.policy is None or not (self.extra or self.sparse_as_complete):
                return paths
            path = self.root / SIDECAR
            self.root.mkdir(parents=True, exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="\n") as out:
                head = {"about": SIDECAR_ABOUT, "label_policy": self.policy, "complete": self.listed}
                out.write(json.dumps(head, ensure_ascii=False, indent=1)[:-2] + ',\n "rows": [')
                for k, line in enumerate(spool or ()):
                    out.write(("," if k else "") + "\n  " + line.rstrip("\n"))
                out.write("\n ]\n}\n")
            return paths + [path]
        finally:
            if spool is not None:
                spool.close()
                Path(spool.name).unlink(missing_ok=True)

    def write(self, batch: ArticleBatch, records: list[PairRecord]) -> None:
        identity = source_identity(batch)
        sentence_id = _sentence_ids(batch, records, identity.ids)
        profiles: dict[str, tuple] = {}  # sentences recur across an article's pairs: n-grams counted once

        def profiled(text: str) -> tuple:
            found = profiles.get(text)
            if found is None:
                found = profiles[text] = profile(text)
            return found

        # (complex document, simple document) → [((ci, si), row)], sparse pairs first, in record order
        rows: dict[tuple[int, int], list[tuple[tuple[int, int], str]]] = {}

        def row(label: str, c_doc: int, c_level: str, ci: int, c_text: str, s_doc: int, s_level: str, si: int,
                s_text: str) -> None:
            c_id, s_id = sentence_id(c_doc, c_level, ci), sentence_id(s_doc, s_level, si)
            c_clean, s_clean = clean_line(c_text), clean_line(s_text)
            score = identity.of_pair(c_level, s_level)[0].get(f"{ci},{si}")
            if score is None:
                score = f"{gleu_of(profiled(c_clean), profiled(s_clean)):.4f}"
            cells = [label, clean_line(s_id), clean_line(c_id), s_clean, c_clean, score]
            if label in LEFT_OUT:  # no TSV row: the sidecar says it
                self._sidecar_row(batch.split, cells)
                return
            rows.setdefault((c_doc, s_doc), []).append(((ci, si), "\t".join(cells) + "\n"))

        full = self._exhaustive_in(batch)
        cells: dict[tuple[int, int], dict[tuple[int, int], str]] = {key: {} for key in full}
        for r in records:
            label = self._label(r)
            grid = cells.get((r.complex_document, r.simple_document))
            if grid is not None:  # written below, with every other sentence pair of the document pair
                for ci in r.complex_ids:
                    for si in r.simple_ids:
                        grid.setdefault((ci, si), label)
                continue
            for ci, c_text in zip(r.complex_ids, r.complex_sentences):
                for si, s_text in zip(r.simple_ids, r.simple_sentences):
                    row(label, r.complex_document, r.complex_level, ci, c_text, r.simple_document, r.simple_level, si, s_text)
        kept = {id(r) for r in records}
        for r in batch.records:  # a pair the export's filters left out (identical, a label...): no row, not notAligned
            grid = cells.get((r.complex_document, r.simple_document))
            if grid is not None and id(r) not in kept:
                for ci in r.complex_ids:
                    for si in r.simple_ids:
                        grid.setdefault((ci, si), "")
        for c_doc, s_doc in sorted(full, key=lambda k: (batch.documents[k[0]]["rank"], batch.documents[k[1]]["rank"], k)):
            c, s = batch.documents[c_doc], batch.documents[s_doc]
            c_sents = [t for p in c["paragraphs"] for t in p]
            s_sents = [t for p in s["paragraphs"] for t in p]
            grid = cells[(c_doc, s_doc)]
            self._count_complete(batch, c, s, len(c_sents), len(s_sents), grid)
            for ci, c_text in enumerate(c_sents):
                for si, s_text in enumerate(s_sents):
                    label = grid.get((ci, si), "notAligned")
                    if label:
                        row(label, c_doc, c["level"], ci, c_text, s_doc, s["level"], si, s_text)
        self._write_rows(batch, rows, set(cells), identity)

    def _exhaustive_in(self, batch: ArticleBatch) -> list[tuple[int, int]]:
        """The article's exhaustive document pairs, found from its documents (the project's set, scanned per
        article, was quadratic: 18 s of a 20,000-article gold export, issue 37)."""
        return [(c, s) for c in batch.documents for s in self.exhaustive_of.get(c, ()) if s in batch.documents]

    def _count_complete(self, batch: ArticleBatch, c: dict, s: dict, m: int, n: int, grid: dict) -> None:
        """Count a complete document pair; list it in the sidecar when the folder carries it whole (no cell
        the filters left out: a row in the TSV or in the sidecar for each of its m × n sentence pairs)."""
        self.complete_written += 1
        if "" in grid.values():
            return
        self.complete_whole += 1
        self.complete_alone += not any(label in LEFT_OUT for label in grid.values())
        self.listed.append({"article": batch.title, "complex_level": c["level"], "simple_level": s["level"],
                            "complex_sentences": m, "simple_sentences": n})

    def _write_rows(self, batch: ArticleBatch, rows: dict[tuple[int, int], list[tuple[tuple[int, int], str]]],
                    complete: set[tuple[int, int]], identity) -> None:
        """Write one article's rows, each document pair's in the imported file's order where it is known
        (the released files: grouped by simple sentence); count the sparse document pairs listed m × n over
        the sentences they name (:meth:`complete_back`)."""
        from annotation.services.corpus.importing.formats.wiki_manual import order_key

        lines = []
        for (c_doc, s_doc), written in rows.items():
            if (c_doc, s_doc) not in complete:
                named_c, named_s = {c for (c, _), _ in written}, {s for (_, s), _ in written}
                self.sparse_as_complete += len({cell for cell, _ in written}) == len(named_c) * len(named_s)
            key = order_key(identity.of_pair(batch.documents[c_doc]["level"], batch.documents[s_doc]["level"])[1]
                            if c_doc in batch.documents and s_doc in batch.documents else None)
            if key is not None:
                written = sorted(written, key=lambda item: key(item[0]))
            lines += [line for _, line in written]
        if lines:
            self._file(f"{batch.split}.tsv").writelines(lines)


def _paragraph_index(document: dict) -> list[int]:
    """Sentence index → paragraph index of one document."""
    return [p for p, sentences in enumerate(document["paragraphs"]) for _ in sentences]


def _sentence_ids(batch: ArticleBatch, records: list[PairRecord], source_ids: dict[int, list]):
    """``sentence_id(document, level, index)``: as the imported file numbered it, else by paragraph."""
    paragraph_of: dict[int, list[int]] = {doc: _paragraph_index(d) for doc, d in batch.documents.items()}
    for doc in {d for r in records for d in (r.complex_document, r.simple_document)} - paragraph_of.keys():
        paragraph_of[doc] = []

    def sentence_id(doc: int, level: str, i: int) -> str:
        kept = source_ids.get(doc)
        if kept is not None:
            return f"{batch.title}-{level}-{kept[i][0]}-{kept[i][1]}"
        par = paragraph_of[doc]
        return f"{batch.title}-{level}-{par[i] if i < len(par) else 0}-{i}"

    return sentence_id
