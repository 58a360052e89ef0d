"""``newsela`` — the Newsela corpus as distributed: ``articles_metadata.csv`` beside ``articles/``::

    slug,language,title,grade_level,version,filename
    bees,en,Bees are busy,12.0,0,bees.en.0.txt
    bees,en,Busy bees,5.0,1,bees.en.1.txt

with ``articles/<slug>.<lang>.<version>.txt`` (upload the folder as a zip/tar; the command takes the
folder or the archive). One article per slug (its title: the slug; the first version's title in the
article's metadata), a document per version: level = the version, version 0 = the original = rank
0, ranked by version; the title, grade level, language and file are kept in the document's metadata.
Only the versions in the import's language are imported (``--language en`` / the API's
``language``, default the project's), so the Spanish versions stay out of an English project.
Paragraphs come from blank lines, sentences from the project's splitter. ``auto`` recognises the
layout by ``articles_metadata.csv``; a ``.txt`` file the metadata does not list is left out (warned);
two files of one name in different folders are refused (the metadata names files without a folder).
"""
from __future__ import annotations

import csv
import io
import math
from collections import defaultdict
from collections.abc import Iterator

from annotation.services.corpus.importing.base import (
    InputFile,
    ParseContext,
    ParsedArticle,
    ParsedDocument,
    normalise_language,
)
from annotation.services.corpus.importing.formats import register
from annotation.services.corpus.importing.limits import over
from annotation.services.corpus.importing.validation import TITLE_MAX

METADATA = "articles_metadata.csv"
COLUMNS = ("slug", "language", "title", "grade_level", "version", "filename")


def is_newsela(names: list[str]) -> bool:
    """``auto``: an upload holding ``articles_metadata.csv``."""
    return any(n.replace("\\", "/").rsplit("/", 1)[-1] == METADATA for n in names)


def _rows(meta: InputFile, ctx: ParseContext) -> Iterator[tuple[int, dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(ctx.text(meta), newline=""))
    header = [h.strip() for h in reader.fieldnames or []]
    missing = [c for c in COLUMNS if c not in header]
    for column in missing:
        ctx.problems.add(meta.name, f"missing column (the header needs {', '.join(COLUMNS)})", line=1, field=column)
    if missing:
        return
    reader.fieldnames = header
    try:
        for row in reader:
            yield reader.line_num, {k: (v or "").strip() for k, v in row.items() if k in COLUMNS}
    except csv.Error as exc:  # a field over csv's limit, a NUL byte...: a located refusal, not a 500
        ctx.problems.add(meta.name, f"not readable as CSV ({exc})", line=reader.line_num + 1)


def _texts(files: list[InputFile], meta: InputFile, ctx: ParseContext) -> dict[str, InputFile]:
    """The text files by their name (the metadata names files without their folder): two files of
    one name in different folders are refused, naming both, rather than one silently left out."""
    texts: dict[str, InputFile] = {}
    for f in files:
        if f is meta:
            continue
        other = texts.setdefault(f.basename, f)
        if other is not f:
            ctx.problems.add(f.name, f"two files are named {f.basename!r} ({other.name} and {f.name}); "
                                     f"{METADATA} names files without their folder — rename or remove one")
    return texts


@register("newsela", extensions=(), order=60, probe=is_newsela,
          example=((METADATA, "slug,language,title,grade_level,version,filename\n"
                              "tiny,en,Tiny,12.0,0,tiny.en.0.txt\ntiny,en,Tiny,4.0,1,tiny.en.1.txt\n"),
                   ("articles/tiny.en.0.txt", "A long and complex sentence.\n"),
                   ("articles/tiny.en.1.txt", "A short one.\n")),
          help="Newsela corpus: articles_metadata.csv + articles/<slug>.<lang>.<version>.txt (a folder, zip or tar); "
               "the language option picks the versions")
def parse(files: list[InputFile], ctx: ParseContext) -> Iterator[ParsedArticle]:
    metas = [f for f in files if f.basename == METADATA]
    if len(metas) != 1:
        ctx.problems.add(metas[1].name if metas else "", f"expected one {METADATA}, found {len(metas)}")
        return
    meta = metas[0]
    texts = _texts(files, meta, ctx)
    if ctx.problems:
        return
    language = normalise_language(ctx.language)
    slugs = _versions(meta, texts, language, ctx)
    if ctx.problems:
        return
    if not slugs:
        ctx.problems.add(meta.name, f"no versions in language {language!r}")
        return
    if not _references_fit(slugs, meta, ctx):
        return
    single = []
    for slug, versions in slugs.items():
        if len(versions) < 2:
            single.append(slug)
            continue
        article = _article(slug, versions, meta, ctx)
        if ctx.problems:
            return  # a text not split (its size, the language) or the import's sentences/characters passed
        if article is not None:
            yield article
    if single:
        ctx.warnings.append(f"{len(single)} article(s) with a single version in {language!r} were left out: "
                            + ", ".join(sorted(single)[:5]) + (", …" if len(single) > 5 else ""))


Versions = dict[int, tuple[int, dict, InputFile]]  # version → (metadata line, row, text file)


def _versions(meta: InputFile, texts: dict[str, InputFile], language: str, ctx: ParseContext) -> dict[str, Versions]:
    """Each slug's versions in ``language`` (the metadata's rows checked, each problem at its line);
    the files the metadata leaves out and the versions in other languages warned."""
    slugs: dict[str, Versions] = defaultdict(dict)
    used: set[str] = set()
    other_languages = 0
    for line, row in _rows(meta, ctx):
        base = row.get("filename", "").replace("\\", "/").rsplit("/", 1)[-1]
        if not _row_ok(meta, line, row, ctx):
            continue
        if normalise_language(row["language"]) != language:
            other_languages += 1
            used.add(base)
            continue
        if not _numbers_ok(meta, line, row, ctx):
            continue
        f = texts.get(base)
        if f is None:
            ctx.problems.add(meta.name, f"no file articles/{base} in the import", line=line, field="filename")
            continue
        used.add(base)
        version, known = row["version"], slugs[row["slug"]]
        if version in known:
            ctx.problems.add(meta.name, f"duplicate version {version} of {row['slug']!r} (also at line "
                                        f"{known[version][0]})", line=line, field="version")
            continue
        known[version] = (line, row, f)
    unlisted = sorted(name for name in texts if name not in used)
    if unlisted:
        ctx.warnings.append(f"{len(unlisted)} file(s) not listed in {METADATA} were left out: "
                            + ", ".join(unlisted[:5]) + (", …" if len(unlisted) > 5 else ""))
    if other_languages:
        ctx.warnings.append(f"{other_languages} version(s) in languages other than {language!r} were left out "
                            "(choose the language to import another)")
    return slugs


def _references_fit(slugs: dict[str, Versions], meta: InputFile, ctx: ParseContext) -> bool:
    """Whether the texts the metadata names, each counted as often as it is named, fit ``IMPORT_MAX_BYTES``
    — decided from the files' sizes before one is read or split (issue 36 item 10: 400 rows naming one
    text were refused only after 226 s of splitting its copies); refused at the row that passes it."""
    limit, total = ctx.limits.total_bytes, 0
    named = sorted((line, f) for versions in slugs.values() if len(versions) > 1 for line, _, f in versions.values())
    for line, f in named:
        total += f.size
        if total > limit:
            ctx.problems.add(meta.name, over(f"the texts the metadata names hold {total:,} bytes by this row (a file "
                                             "counts each time it is named)", "IMPORT_MAX_BYTES", limit),
                             line=line, field="filename", limit="IMPORT_MAX_BYTES")
            return False
    return True


def _row_ok(meta: InputFile, line: int, row: dict[str, str], ctx: ParseContext) -> bool:
    """No empty cell, a title of at most ``TITLE_MAX`` characters (each problem at its line and column)."""
    empty = [c for c in COLUMNS if not row.get(c)]
    for column in empty:
        ctx.problems.add(meta.name, "is empty", line=line, field=column)
    if empty:
        return False
    if len(row["title"]) > TITLE_MAX:
        ctx.problems.add(meta.name, f"is longer than {TITLE_MAX} characters ({len(row['title']):,})", line=line,
                         field="title")
        return False
    return True


def _numbers_ok(meta: InputFile, line: int, row: dict, ctx: ParseContext) -> bool:
    """A row's version (0 = the original) and grade level read as numbers into ``row`` (``version``, ``grade``)."""
    try:
        version = int(row["version"])
    except ValueError:
        version = -1
    if version < 0:
        ctx.problems.add(meta.name, f"must be a version number (0 = the original), got {row['version']!r}", line=line,
                         field="version")
        return False
    try:
        grade = float(row["grade_level"])
    except ValueError:
        grade = math.nan
    if not math.isfinite(grade):
        ctx.problems.add(meta.name, f"must be a number, got {row['grade_level']!r}", line=line, field="grade_level")
        return False
    row["version"], row["grade"] = version, grade
    return True


def _article(slug: str, versions: Versions, meta: InputFile, ctx: ParseContext) -> ParsedArticle | None:
    """One slug's article, a document per version; the import's sentences and characters counted
    after each document is split, so a metadata file naming one text many times stops at the limit
    (reported at the version's line) rather than after splitting every copy."""
    documents: list[ParsedDocument] = []
    sentences = chars = 0
    for rank, version in enumerate(sorted(versions)):
        line, row, f = versions[version]
        paragraphs = ctx.split(ctx.text(f), f.name)
        if paragraphs is None:
            return None
        if not paragraphs:
            ctx.problems.add(f.name, "holds no sentences")
            continue
        sentences += sum(len(p) for p in paragraphs)
        chars += sum(len(t) for p in paragraphs for t in p)
        if not ctx.room(meta.name, line, sentences, chars, field_name="filename", what=f"article {slug!r}"):
            return None
        documents.append(ParsedDocument(level=str(version), rank=rank, paragraphs=paragraphs, meta={
            "file": f.name, "title": row["title"], "grade_level": row["grade"], "version": version,
            "language": row["language"]}))
    if len(documents) != len(versions):
        return None
    first_line, first, _ = versions[min(versions)]
    return ParsedArticle(title=slug, file=meta.name, line=first_line, documents=documents,
                         meta={"title": first["title"], "slug": slug, "language": first["language"]})
