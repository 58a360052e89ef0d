"""CNN/DailyMail-style ``.story`` files: body paragraphs, then ``@highlight`` lines each followed by
one highlight sentence. The body becomes the ``document`` level (rank 0), the highlights the
``summary`` level (rank 1), one highlight per paragraph, kept as written."""
from __future__ import annotations

from collections.abc import Iterator

from annotation.services.corpus.importing.base import InputFile, ParseContext, ParsedArticle, ParsedDocument
from annotation.services.corpus.importing.formats import register
from annotation.services.corpus.importing.validation import lines_of

EXTENSIONS = ("story",)
MARKER = "@highlight"


def _parse_one(f: InputFile, ctx: ParseContext) -> ParsedArticle | None:
    lines = lines_of(ctx.text(f))
    markers = [i for i, line in enumerate(lines) if line.strip() == MARKER]
    if not markers:
        ctx.problems.add(f.name, f"story has no {MARKER} lines; a story needs its summary highlights")
        return None
    ok = True
    highlights: list[str] = []
    for pos, i in enumerate(markers):
        end = markers[pos + 1] if pos + 1 < len(markers) else len(lines)
        texts = [line.strip() for line in lines[i + 1 : end] if line.strip()]
        if not texts:
            ctx.problems.add(f.name, f"no highlight sentence follows this {MARKER}", line=i + 1, field=MARKER)
            ok = False
        else:
            highlights.append(" ".join(texts))
    body = "\n".join(lines[: markers[0]])
    if not body.strip():
        ctx.problems.add(f.name, f"story has no body text before the first {MARKER}", line=1)
        return None
    if not ok or ctx.problems:  # no point splitting text that will not be imported
        return None
    paragraphs = ctx.split(body, f.name, 1)
    if paragraphs is None:
        return None
    if not paragraphs:
        ctx.problems.add(f.name, "story body holds no sentences", line=1)
        return None
    documents = [
        ParsedDocument(level="document", rank=0, paragraphs=paragraphs, meta={"file": f.name}),
        ParsedDocument(level="summary", rank=1, paragraphs=[[h] for h in highlights], meta={"file": f.name}),
    ]
    return ParsedArticle(title=f.stem, file=f.name, line=None, documents=documents)


@register("stories", extensions=EXTENSIONS,
          example=(("tiny.story", "A body sentence.\n\n@highlight\n\nA highlight\n"),), order=30,
          help="CNN/DailyMail .story with @highlight")
def parse(files: list[InputFile], ctx: ParseContext) -> Iterator[ParsedArticle]:
    for f in files:
        if f.extension not in EXTENSIONS:
            ctx.problems.add(f.name, f"unknown extension {'.' + f.extension if f.extension else '(none)'} for the stories format; "
                                     "expected .story")
            continue
        article = _parse_one(f, ctx)
        if article is not None:
            yield article
