"""``tsv`` — ``wiki-manual/<split>.tsv``: the released Wiki-Manual/Newsela-Manual layout, no header,
  tab-separated ``label, simple-sent-id, complex-sent-id, simple, complex, GLEU``. Labels are
  written as those files name them (``aligned``, ``partialAligned``, ``notAligned``, from the
  label's class); an n:m pair becomes one row per sentence link (c × s), each with the pair's label,
  as the released data lists multi-sentence alignments. Sentence ids are
  ``<article>-<level>-<paragraph>-<sentence index in the document>``. GLEU: ``metrics.gleu``.
"""
from __future__ import annotations

from annotation.services.export.formats import register
from annotation.services.export.formats.base import Writer, clean_line
from annotation.services.export.metrics import gleu_of, profile
from annotation.services.export.records import ArticleBatch, PairRecord

WIKI_LABELS = {"aligned": "aligned", "partial": "partialAligned", "not": "notAligned"}


@register("tsv", order=10, readme=(
    'wiki-manual/*.tsv    label, simple-sent-id, complex-sent-id, simple, complex, GLEU (no header;\n'
    '                     labels aligned / partialAligned / notAligned; n:m pairs as 1:1 rows)'
))
class TsvWriter(Writer):
    folder = "wiki-manual"

    def names(self, split: str) -> list[str]:
        return [f"{split}.tsv"]

    def write(self, batch: ArticleBatch, records: list[PairRecord]) -> None:
        out = self._file(f"{batch.split}.tsv")
        paragraph_of: dict[int, list[int]] = {}
        for doc in {d for r in records for d in (r.complex_document, r.simple_document)}:
            paragraph_of[doc] = _paragraph_index(batch.documents[doc])
        profiles: dict[str, tuple] = {}  # sentences recur across an article's pairs: n-grams counted once

        def profiled(text: str) -> tuple:
            found = profiles.get(text)
            if found is None:
                found = profiles[text] = profile(text)
            return found

        lines = []
        for r in records:
            c_par, s_par = paragraph_of[r.complex_document], paragraph_of[r.simple_document]
            label = WIKI_LABELS.get(r.counts_as, "notAligned")
            for ci, c_text in zip(r.complex_ids, r.complex_sentences):
                c_id = f"{batch.title}-{r.complex_level}-{c_par[ci] if ci < len(c_par) else 0}-{ci}"
                c_clean = clean_line(c_text)
                for si, s_text in zip(r.simple_ids, r.simple_sentences):
                    s_id = f"{batch.title}-{r.simple_level}-{s_par[si] if si < len(s_par) else 0}-{si}"
                    s_clean = clean_line(s_text)
                    score = gleu_of(profiled(c_clean), profiled(s_clean))
                    lines.append(f"{label}\t{clean_line(s_id)}\t{clean_line(c_id)}\t{s_clean}\t{c_clean}\t{score:.4f}\n")
        out.writelines(lines)


def _paragraph_index(document: dict) -> list[int]:
    """Sentence index → paragraph index of one document."""
    return [p for p, sentences in enumerate(document["paragraphs"]) for _ in sentences]
