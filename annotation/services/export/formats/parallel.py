"""``parallel`` — ``parallel/<split>.src`` / ``.dst``: one pair per line (complex → simple), pairs
  whose label counts as aligned or partial; ``<split>.joined.src`` / ``.dst``: per complex
  sentence group, every simple sentence aligned to it joined in document order (splits kept whole).
  A training output: "drop identical" leaves identical pairs out of it (gold files keep them).
"""
from __future__ import annotations

from annotation.services.export.formats import register
from annotation.services.export.formats.base import LINKING, Writer, clean_line
from annotation.services.export.records import ArticleBatch, PairRecord


@register("parallel", order=20, training=True, readme=(
    'parallel/*.src|.dst  training pairs, one per line (every link: aligned, partial and aligned-or-partial;\n'
    '                     identical pairs left out unless kept); *.joined.*: the simple sentences\n'
    '                     aligned to the same complex sentence(s) joined'
))
class ParallelWriter(Writer):
    folder = "parallel"

    def names(self, split: str) -> list[str]:
        return [f"{split}.src", f"{split}.dst", f"{split}.joined.src", f"{split}.joined.dst"]

    def write(self, batch: ArticleBatch, records: list[PairRecord]) -> None:
        linking = [r for r in records if r.counts_as in LINKING]
        if not linking:
            return
        src, dst = self._file(f"{batch.split}.src"), self._file(f"{batch.split}.dst")
        src.writelines(f"{clean_line(r.complex)}\n" for r in linking)
        dst.writelines(f"{clean_line(r.simple)}\n" for r in linking)
        # joined: every simple sentence aligned to the same complex sentence group, in document order
        groups: dict[tuple, dict[int, str]] = {}
        complex_text: dict[tuple, str] = {}
        for r in linking:
            key = (r.complex_document, r.simple_document, r.complex_ids)
            groups.setdefault(key, {}).update(zip(r.simple_ids, r.simple_sentences))
            complex_text[key] = r.complex
        joined_src, joined_dst = self._file(f"{batch.split}.joined.src"), self._file(f"{batch.split}.joined.dst")
        for key in sorted(groups, key=lambda k: (k[0], k[1], k[2])):
            simple = groups[key]
            joined_src.write(clean_line(complex_text[key]) + "\n")
            joined_dst.write(clean_line(" ".join(simple[i] for i in sorted(simple))) + "\n")
