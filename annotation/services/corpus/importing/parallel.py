"""Line-aligned parallel files ``X.src`` / ``X.dst`` (WikiLarge-style pair corpora, pivot-translation
corpora): line *i* of ``X.src`` ↔ line *i* of ``X.dst``.

Each stem becomes one article with a ``src`` document (rank 0) and a ``dst`` document (rank 1),
one line per paragraph of one sentence, kept as given (never re-split), and an imported candidate
pair (no gold label) for every line."""
from __future__ import annotations

from annotation.services.corpus.importing.base import ParseContext, ParsedArticle, ParsedDocument, ParsedPair, TextFile
from annotation.services.corpus.importing.validation import lines_of

COMPLEX_EXT, SIMPLE_EXT = "src", "dst"
EXTENSIONS = (COMPLEX_EXT, SIMPLE_EXT)


def _lines(f: TextFile, ctx: ParseContext) -> list[str] | None:
    lines = lines_of(f.text)
    ok = True
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            ctx.problems.add(f.name, f"empty line at line {n} of {f.basename}; every line must hold a sentence", line=n)
            ok = False
    return [line.strip() for line in lines] if ok else None


def parse(files: list[TextFile], ctx: ParseContext) -> list[ParsedArticle]:
    stems: dict[str, dict[str, TextFile]] = {}
    for f in files:
        if f.extension not in EXTENSIONS:
            ctx.problems.add(f.name, f"unknown extension {'.' + f.extension if f.extension else '(none)'} for the parallel format; expected .src and .dst")
            continue
        key = f.name[: -(len(f.extension) + 1)]
        stems.setdefault(key, {})[f.extension] = f
    articles: list[ParsedArticle] = []
    for key, sides in stems.items():
        if len(sides) == 1:
            (ext, f), = sides.items()
            other = SIMPLE_EXT if ext == COMPLEX_EXT else COMPLEX_EXT
            ctx.problems.add(f.name, f"missing partner file {key.rsplit('/', 1)[-1]}.{other} for {f.basename}")
            continue
        src, dst = sides[COMPLEX_EXT], sides[SIMPLE_EXT]
        src_lines, dst_lines = _lines(src, ctx), _lines(dst, ctx)
        n_src, n_dst = len(lines_of(src.text)), len(lines_of(dst.text))
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
        articles.append(ParsedArticle(title=src.stem, file=src.name, line=None, documents=documents, pairs=pairs))
    return articles
