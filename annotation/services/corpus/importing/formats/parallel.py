"""Line-aligned parallel files ``X.src`` / ``X.dst`` (WikiLarge-style pair corpora, pivot-translation
corpora): line *i* of ``X.src`` ↔ line *i* of ``X.dst``.

Each stem becomes one article with a ``src`` document (rank 0) and a ``dst`` document (rank 1),
one line per paragraph of one sentence, kept as given (never re-split), and an imported candidate
pair (no gold label) for every line."""
from __future__ import annotations

from collections.abc import Iterator

from annotation.services.corpus.importing.base import InputFile, ParseContext, ParsedArticle, ParsedDocument, ParsedPair
from annotation.services.corpus.importing.formats import register
from annotation.services.corpus.importing.limits import over

COMPLEX_EXT, SIMPLE_EXT = "src", "dst"
EXTENSIONS = (COMPLEX_EXT, SIMPLE_EXT)


def _lines(f: InputFile, ctx: ParseContext) -> list[str] | None:
    lines: list[str] = []
    ok = True
    for n, line in ctx.lines(f):
        if not line.strip():
            ctx.problems.add(f.name, f"empty line at line {n} of {f.basename}; every line must hold a sentence", line=n)
            ok = False
        lines.append(line.strip())
    return lines if ok else None


def _too_long(f: InputFile, n: int, ctx: ParseContext) -> bool:
    limit = ctx.limits.sentences_per_document
    if n <= limit:
        return False
    ctx.problems.add(f.name, over(f"file {f.name} has {n:,} lines (a sentence each)", "IMPORT_MAX_SENTENCES_PER_DOCUMENT",
                                  limit) + "; split it into smaller .src/.dst pairs",
                     limit="IMPORT_MAX_SENTENCES_PER_DOCUMENT")
    return True


@register("parallel", extensions=EXTENSIONS,
          example=(("tiny.src", "A long sentence.\n"), ("tiny.dst", "A short one.\n")), order=40,
          help="X.src + X.dst line files")
def parse(files: list[InputFile], ctx: ParseContext) -> Iterator[ParsedArticle]:
    stems: dict[str, dict[str, InputFile]] = {}
    for f in files:
        if f.extension not in EXTENSIONS:
            ctx.problems.add(f.name, f"unknown extension {'.' + f.extension if f.extension else '(none)'} for the parallel format; "
                                     "expected .src and .dst")
            continue
        key = f.name[: -(len(f.extension) + 1)]
        stems.setdefault(key, {})[f.extension] = f
    for key, sides in stems.items():
        if len(sides) == 1:
            (ext, f), = sides.items()
            other = SIMPLE_EXT if ext == COMPLEX_EXT else COMPLEX_EXT
            ctx.problems.add(f.name, f"missing partner file {key.rsplit('/', 1)[-1]}.{other} for {f.basename}")
            continue
        src, dst = sides[COMPLEX_EXT], sides[SIMPLE_EXT]
        n_src, n_dst = ctx.line_counts.get(src.name, 0), ctx.line_counts.get(dst.name, 0)
        if _too_long(src, n_src, ctx) | _too_long(dst, n_dst, ctx):
            continue  # not read: at most IMPORT_MAX_SENTENCES_PER_DOCUMENT lines are held in memory
        src_lines, dst_lines = _lines(src, ctx), _lines(dst, ctx)
        if n_src != n_dst:
            ctx.problems.add(
                src.name,
                f"{src.basename} has {n_src} lines but {dst.basename} has {n_dst}; line-aligned files need the same number of lines",
            )
            continue
        if src_lines is None or dst_lines is None:
            continue
        documents = [
            ParsedDocument(level=COMPLEX_EXT, rank=0, paragraphs=[[s] for s in src_lines], meta={"file": src.name}),
            ParsedDocument(level=SIMPLE_EXT, rank=1, paragraphs=[[s] for s in dst_lines], meta={"file": dst.name}),
        ]
        pairs = [ParsedPair(COMPLEX_EXT, SIMPLE_EXT, (i,), (i,)) for i in range(n_src)]
        yield ParsedArticle(title=src.stem, file=src.name, line=None, documents=documents, pairs=pairs)
