"""Plain-text articles at several reading levels, one file per level: ``<Title>-<level>.<ext>``.

``Amsterdam-adv.txt``, ``Amsterdam-int.txt``, ``Amsterdam-ele.txt`` (OneStopEnglish style) or
``Water-0.txt`` … ``Water-4.txt`` (Newsela style; Newsela's own ``water.en.0.txt`` works too).
Numeric levels rank in ascending order (0 = most complex); named levels rank by a known scale.
Paragraphs are blank-line separated (newline separated when the file has no blank line); sentences
are split with the project language.
"""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator

from annotation.services.corpus.importing.base import InputFile, ParseContext, ParsedArticle, ParsedDocument
from annotation.services.corpus.importing.formats import register

EXTENSIONS = ("txt", "text", "md")

# Named levels, most complex first. A group of files must use levels of one scale.
SCALES: tuple[tuple[str, ...], ...] = (
    ("adv", "int", "ele"),
    ("advanced", "intermediate", "elementary"),
    ("complex", "simple"),
    ("document", "summary"),
    ("original", "simplified"),
)

_TITLE_LEVEL = re.compile(r"^(?P<title>.*\S)-(?P<level>[^-\s]+)$")
_NEWSELA = re.compile(r"^(?P<title>.+)\.(?P<lang>[a-z]{2})\.(?P<level>\d+)$")


def known_levels() -> str:
    return "numbers (0 = most complex) or one of the scales " + "; ".join(" < ".join(s) for s in SCALES)


def split_name(f: InputFile) -> tuple[str, str] | None:
    """``(title, level)`` from a file name, or None if it does not follow ``<Title>-<level>.<ext>``."""
    for pattern in (_NEWSELA, _TITLE_LEVEL):
        m = pattern.match(f.stem)
        if m:
            return m["title"].strip(), m["level"]
    return None


def _rank_group(title: str, members: list[tuple[str, InputFile]], ctx: ParseContext) -> list[tuple[str, int, InputFile]] | None:
    """``(canonical level, rank, file)`` for one article's files, or None after reporting why not."""
    problems = ctx.problems
    files = ", ".join(f.name for _, f in members)
    if len(members) == 1:
        level, f = members[0]
        problems.add(f.name, f"article {title!r} has a single level ({level!r}); an article needs at least two levels")
        return None
    numeric = [(lv, f) for lv, f in members if lv.isdigit()]
    named = [(lv, f) for lv, f in members if not lv.isdigit()]
    if numeric and named:
        problems.add(
            named[0][1].name,
            f"mismatched levels in article {title!r}: numeric ({', '.join(lv for lv, _ in numeric)}) and named "
            f"({', '.join(lv for lv, _ in named)}) levels mixed in {files}",
        )
        return None
    keyed = [(int(lv), str(int(lv)), f) for lv, f in numeric] if numeric else [(lv.casefold(), lv.casefold(), f) for lv, f in named]
    seen: dict[object, InputFile] = {}
    ok = True
    for key, _, f in keyed:
        if key in seen:
            problems.add(f.name, f"duplicate level {str(key)!r} in article {title!r} (also {seen[key].name})")
            ok = False
        seen[key] = f
    if not ok:
        return None
    if numeric:
        ordered = sorted(keyed, key=lambda k: k[0])
        return [(level, rank, f) for rank, (_, level, f) in enumerate(ordered)]
    unknown = [(level, f) for _, level, f in keyed if not any(level in s for s in SCALES)]
    for level, f in unknown:
        problems.add(f.name, f"unknown level {level!r}; known levels are {known_levels()}")
    if unknown:
        return None
    levels = {level for _, level, _ in keyed}
    scale = next((s for s in SCALES if levels <= set(s)), None)
    if scale is None:
        problems.add(members[0][1].name,
                     f"levels {', '.join(sorted(levels))} of article {title!r} come from different scales; use one of: {known_levels()}")
        return None
    ordered = sorted(keyed, key=lambda k: scale.index(k[1]))
    return [(level, rank, f) for rank, (_, level, f) in enumerate(ordered)]


@register("levels", extensions=EXTENSIONS,
          example=(("Tiny-adv.txt", "A long and complex sentence.\n"), ("Tiny-ele.txt", "A short one.\n")), order=20,
          help="<Title>-<level>.txt files, e.g. adv/int/ele or 0..4")
def parse(files: list[InputFile], ctx: ParseContext) -> Iterator[ParsedArticle]:
    """One article per title, its level files read (whole) only when it is split into sentences."""
    groups: dict[str, list[tuple[str, InputFile]]] = defaultdict(list)
    for f in files:
        parts = split_name(f)
        if parts is None or not parts[0]:
            ctx.problems.add(f.name, "bad level file name: expected <Title>-<level>.<ext>, e.g. Amsterdam-adv.txt or Water-0.txt")
            continue
        title, level = parts
        groups[title].append((level, f))
    for title, members in groups.items():
        ranked = _rank_group(title, members, ctx)
        if ranked is None or ctx.problems:  # no point splitting text that will not be imported
            continue
        documents: list[ParsedDocument] = []
        for level, rank, f in ranked:
            paragraphs = ctx.split(ctx.text(f), f.name)
            if paragraphs is None:
                return
            if not paragraphs:
                ctx.problems.add(f.name, "holds no sentences")
                continue
            documents.append(ParsedDocument(level=level, rank=rank, paragraphs=paragraphs, meta={"file": f.name}))
        if len(documents) == len(ranked):
            yield ParsedArticle(title=title, file=ranked[0][2].name, line=None, documents=documents)
